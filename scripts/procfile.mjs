// Reads the Procfile: one "name: command" per line. npm start and the tests
// use these lines, so the commands exist in one place only.
import { readFileSync } from 'node:fs'

export function readProcfile(file) {
  const entries = []
  for (const [n, raw] of readFileSync(file, 'utf8').split('\n').entries()) {
    const line = raw.trim()
    if (!line || line.startsWith('#')) continue
    const m = /^([A-Za-z0-9_-]+):\s*(.+)$/.exec(line)
    if (!m) throw new Error(`${file}:${n + 1}: expected "name: command"`)
    entries.push({ name: m[1], command: m[2] })
  }
  return entries
}
