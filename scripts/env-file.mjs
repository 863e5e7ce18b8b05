// Optional .env file: KEY=VALUE lines (# comments, optional quotes). Values
// already in the environment win, so the environment stays the source of truth.
import { existsSync, readFileSync } from 'node:fs'

export function loadEnvFile(file, env = process.env) {
  if (!existsSync(file)) return []
  const loaded = []
  for (const [n, raw] of readFileSync(file, 'utf8').split('\n').entries()) {
    const line = raw.trim()
    if (!line || line.startsWith('#')) continue
    const m = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line)
    if (!m) throw new Error(`${file}:${n + 1}: expected KEY=VALUE`)
    let value = m[2]
    if ((value.startsWith('"') && value.endsWith('"')) || (value.startsWith("'") && value.endsWith("'"))) value = value.slice(1, -1)
    if (env[m[1]] === undefined) {
      env[m[1]] = value
      loaded.push(m[1])
    }
  }
  return loaded
}
