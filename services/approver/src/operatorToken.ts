import { randomBytes, timingSafeEqual } from 'node:crypto'
import { closeSync, fchmodSync, openSync, renameSync, rmSync, writeSync } from 'node:fs'
import path from 'node:path'

import { OperatorError, readOwnFile, VARIABLES } from '@countersign/shared'
import { OPERATOR_TOKEN_FILE } from '@countersign/shared/http/operatorAuth'

export { OPERATOR_TOKEN_FILE }

/** A token as SERVICE_OPERATOR_TOKEN must be: 32 to 1024 printable characters without spaces. */
export const isUsableOperatorToken = (token: string): boolean => VARIABLES.SERVICE_OPERATOR_TOKEN.parse(token) !== undefined

/**
 * The operator's bearer token: SERVICE_OPERATOR_TOKEN when set (its length
 * was checked with the rest of the configuration), otherwise the token in
 * DATA_DIR/operator-token (mode 0600), generated at the first start. A file
 * token that is too short (written by hand, or by an older version) is
 * replaced by a new random one. An agent that can call the API cannot read
 * the file, so it cannot approve its own request.
 */
export function loadOrCreateOperatorToken(dataDir: string, fromEnv: string | null): { token: string; file: string | null } {
  if (fromEnv) return { token: fromEnv, file: null }
  const file = path.join(dataDir, OPERATOR_TOKEN_FILE)
  const existing = readTokenFile(file)
  if (existing !== null) {
    if (isUsableOperatorToken(existing)) return { token: existing, file }
    return { token: replaceTokenFile(file), file }
  }
  const token = newToken()
  try {
    writePrivate(file, token, 'wx')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
    // Another process created it first: use theirs when it is usable.
    const theirs = readTokenFile(file) ?? ''
    return { token: isUsableOperatorToken(theirs) ? theirs : replaceTokenFile(file), file }
  }
  return { token, file }
}

const newToken = () => randomBytes(32).toString('base64url')

/**
 * The token in the file, or null when there is none. Only the file itself
 * (a symlink there is refused, so no file elsewhere is taken for the token or
 * has its mode changed), a regular file, 0600 (group and other bits cleared).
 */
function readTokenFile(file: string): string | null {
  const bytes = readOwnFile(file, { maxBytes: 64 * 1024, privateMode: true, refuse: (message) => new OperatorError(`operator token: ${message}`) })
  return bytes === null ? null : bytes.toString('utf8').trim()
}

/** A new token written beside the file and renamed over it: the file is never seen half-written or with a short token. */
function replaceTokenFile(file: string): string {
  const token = newToken()
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`
  try {
    writePrivate(temp, token, 'wx')
    renameSync(temp, file)
  } catch (err) {
    rmSync(temp, { force: true })
    throw err
  }
  return token
}

function writePrivate(file: string, token: string, flags: 'wx'): void {
  const fd = openSync(file, flags, 0o600)
  try {
    fchmodSync(fd, 0o600) // 0600 whatever the umask
    writeSync(fd, token + '\n')
  } finally {
    closeSync(fd)
  }
}

export { bearerMatches } from '@countersign/shared/http/operatorAuth'

/** Constant-time comparison of a presented token with the operator's. */
export function tokenMatches(given: string, expected: string): boolean {
  const a = Buffer.from(given)
  const b = Buffer.from(expected)
  return a.length === b.length && timingSafeEqual(a, b)
}
