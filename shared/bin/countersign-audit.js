#!/usr/bin/env node
// countersign-audit: committed outside dist/ so that `npm ci` links it before anything is
// built; the command then always resolves to this repository and `npx` never
// fetches a package of the same name from a registry. It runs the built code
// exactly as `node dist/server/audit/cli.js` would.
import { existsSync } from 'node:fs'
import { fileURLToPath, pathToFileURL } from 'node:url'

const entry = fileURLToPath(new URL('../dist/server/audit/cli.js', import.meta.url))
if (!existsSync(entry)) {
  process.stderr.write('countersign-audit: ' + entry + ' is not built yet; run npm run build first\n')
  process.exit(1)
}
// The built module runs itself when it is the program (process.argv[1]).
process.argv[1] = entry
await import(pathToFileURL(entry).href)
