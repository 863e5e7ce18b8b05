// Optional .env file: KEY=VALUE lines (# comments, optional quotes). Values
// already in the environment win, so the environment stays the source of truth.
// A file that cannot be read, a line that is not KEY=VALUE or a key set
// twice is an OperatorError naming the file and line: the launcher prints it alone.
import { readFileSync } from 'node:fs'
import { OperatorError } from '@countersign/shared'

/**
 * Sets each KEY=VALUE of `file` in `env` (process.env unless given) that
 * `env` does not have yet; returns the keys it set. A missing file sets
 * nothing; an unreadable one, a line that is not KEY=VALUE or a key set on
 * two lines throws an OperatorError.
 * @param {string} file
 * @param {Record<string, string | undefined>} [env]
 * @returns {string[]}
 */
export function loadEnvFile(file, env = process.env) {
  let text
  try {
    text = readFileSync(file, 'utf8')
  } catch (err) {
    const { code, message } = /** @type {NodeJS.ErrnoException} */ (err)
    if (code === 'ENOENT') return []
    throw new OperatorError(`cannot read ${file}: ${code ?? message}`)
  }
  /** @type {string[]} */
  const loaded = []
  /**
   * The line each key was first set on. A repeated key is refused: systemd's
   * EnvironmentFile=, compose and dotenv keep the last value, this reader
   * kept the first, so an override appended at the end was silently ignored
   * (found by review); JSON config refuses duplicate members for the same reason.
   * @type {Map<string, number>}
   */
  const firstLine = new Map()
  for (const [n, raw] of text.split('\n').entries()) {
    const line = raw.trim()
    if (!line || line.startsWith('#')) continue
    const m = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line)
    if (!m) throw new OperatorError(`${file}:${n + 1}: expected KEY=VALUE (a # starts a comment line)`)
    // Both groups always take part in a match (the second may be empty).
    const [, key = '', rawValue = ''] = m
    const first = firstLine.get(key)
    if (first !== undefined) throw new OperatorError(`${file}:${n + 1}: ${key} is set again (first on line ${first}); keep one of the two lines`)
    firstLine.set(key, n + 1)
    let value = rawValue
    if ((value.startsWith('"') && value.endsWith('"')) || (value.startsWith("'") && value.endsWith("'"))) value = value.slice(1, -1)
    if (env[key] === undefined) {
      env[key] = value
      loaded.push(key)
    }
  }
  return loaded
}
