// Reads the Procfile: one "name: command" per line. npm start and the tests
// use these lines, so the commands exist in one place only.
import { readFileSync } from 'node:fs'

/**
 * @typedef {object} ProcfileEntry
 * @property {string} name
 * @property {string} command
 */

/**
 * The Procfile's "name: command" lines in order; throws naming the line that
 * is neither that, blank nor a # comment.
 * @param {string} file
 * @returns {ProcfileEntry[]}
 */
export function readProcfile(file) {
  /** @type {ProcfileEntry[]} */
  const entries = []
  for (const [n, raw] of readFileSync(file, 'utf8').split('\n').entries()) {
    const line = raw.trim()
    if (!line || line.startsWith('#')) continue
    const m = /^([A-Za-z0-9_-]+):\s*(.+)$/.exec(line)
    if (!m) throw new Error(`${file}:${n + 1}: expected "name: command"`)
    // Both groups always take part in a match.
    const [, name = '', command = ''] = m
    entries.push({ name, command })
  }
  return entries
}
