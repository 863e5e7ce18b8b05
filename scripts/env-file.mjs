// Optional .env file: KEY=VALUE lines (# comments, optional quotes). Values
// already in the environment win, so the environment stays the source of truth.
// A file that cannot be read or a line that is not KEY=VALUE is an
// OperatorError naming the file and line: the launcher prints it alone.
import { readFileSync } from 'node:fs'
import { OperatorError } from '@countersign/shared'

export function loadEnvFile(file, env = process.env) {
  let text
  try {
    text = readFileSync(file, 'utf8')
  } catch (err) {
    if (err.code === 'ENOENT') return []
    throw new OperatorError(`cannot read ${file}: ${err.code ?? err.message}`)
  }
  const loaded = []
  for (const [n, raw] of text.split('\n').entries()) {
    const line = raw.trim()
    if (!line || line.startsWith('#')) continue
    const m = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line)
    if (!m) throw new OperatorError(`${file}:${n + 1}: expected KEY=VALUE (a # starts a comment line)`)
    let value = m[2]
    if ((value.startsWith('"') && value.endsWith('"')) || (value.startsWith("'") && value.endsWith("'"))) value = value.slice(1, -1)
    if (env[m[1]] === undefined) {
      env[m[1]] = value
      loaded.push(m[1])
    }
  }
  return loaded
}
