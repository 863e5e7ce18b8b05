#!/usr/bin/env node
// countersign-mcp: committed outside dist/ so that `npm ci` links it before
// anything is built; the command then always resolves to this repository and
// `npx` never fetches a package of the same name from a registry.
import { existsSync } from 'node:fs'
import { fileURLToPath, pathToFileURL } from 'node:url'

const entry = fileURLToPath(new URL('../dist/main.js', import.meta.url))
if (!existsSync(entry)) {
  process.stderr.write('countersign-mcp: ' + entry + ' is not built yet; run npm run build first\n')
  process.exit(1)
}
const { main } = await import(pathToFileURL(entry).href)
const code = await main(process.argv.slice(2), process.env)
// -1: the server is running and ends when its stdin closes.
if (code >= 0) process.exitCode = code
