import { randomBytes, timingSafeEqual } from 'node:crypto'
import { chmodSync, closeSync, existsSync, fchmodSync, openSync, readFileSync, writeSync } from 'node:fs'
import path from 'node:path'

import { OPERATOR_TOKEN_FILE } from '@countersign/shared/http/operatorAuth'

export { OPERATOR_TOKEN_FILE }

/**
 * The operator's bearer token: SERVICE_OPERATOR_TOKEN when set, otherwise a
 * random token generated once into DATA_DIR/operator-token (mode 0600). An
 * agent that can call the API cannot read it, so it cannot approve its own
 * request.
 */
export function loadOrCreateOperatorToken(dataDir: string, fromEnv: string | null): { token: string; file: string | null } {
  if (fromEnv) return { token: fromEnv, file: null }
  const file = path.join(dataDir, OPERATOR_TOKEN_FILE)
  if (existsSync(file)) {
    chmodSync(file, 0o600)
    const token = readFileSync(file, 'utf8').trim()
    if (token.length >= 32) return { token, file }
  }
  const token = randomBytes(32).toString('base64url')
  try {
    const fd = openSync(file, 'wx', 0o600)
    fchmodSync(fd, 0o600) // 0600 whatever the umask
    writeSync(fd, token + '\n')
    closeSync(fd)
  } catch (err) {
    // Another process created it first: use theirs.
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return { token: readFileSync(file, 'utf8').trim(), file }
    throw err
  }
  return { token, file }
}

export { bearerMatches } from '@countersign/shared/http/operatorAuth'

/** Constant-time comparison of a presented token with the operator's. */
export function tokenMatches(given: string, expected: string): boolean {
  const a = Buffer.from(given)
  const b = Buffer.from(expected)
  return a.length === b.length && timingSafeEqual(a, b)
}
