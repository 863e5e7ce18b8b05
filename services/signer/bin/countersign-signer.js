#!/usr/bin/env node
// countersign-signer: committed outside dist/ so that `npm ci` links it before anything is
// built; the command then always resolves to this repository and `npx` never
// fetches a package of the same name from a registry. It runs the built code
// exactly as `node dist/main.js` would; `countersign-signer audit-reanchor …`
// runs the operator's re-anchor command (dist/cli/auditReanchor.js) instead,
// which the signer process itself never loads.
import { existsSync } from 'node:fs'
import { fileURLToPath, pathToFileURL } from 'node:url'

const reanchor = process.argv[2] === 'audit-reanchor'
const entry = fileURLToPath(new URL(reanchor ? '../dist/cli/auditReanchor.js' : '../dist/main.js', import.meta.url))
if (!existsSync(entry)) {
  process.stderr.write('countersign-signer: ' + entry + ' is not built yet; run npm run build first\n')
  process.exit(1)
}
// The built module runs itself when it is the program (process.argv[1]).
process.argv[1] = entry
if (reanchor) process.argv.splice(2, 1)
await import(pathToFileURL(entry).href)
