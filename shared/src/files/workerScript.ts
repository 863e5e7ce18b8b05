import { existsSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * The script of a worker thread that sits beside the module at `moduleUrl`
 * (its import.meta.url). Built, that is the .js file beside it; when the
 * module runs from its TypeScript source (the tests), the same file in the
 * package's dist/, as a thread cannot load TypeScript.
 */
export function workerScriptBeside(moduleUrl: string, workerFile: string): string {
  const beside = path.join(path.dirname(fileURLToPath(moduleUrl)), workerFile)
  if (existsSync(beside)) return beside
  const src = `${path.sep}src${path.sep}`
  const at = beside.lastIndexOf(src)
  return at < 0 ? beside : `${beside.slice(0, at)}${path.sep}dist${path.sep}${beside.slice(at + src.length)}`
}
