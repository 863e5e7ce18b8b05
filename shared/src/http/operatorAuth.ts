import { timingSafeEqual } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'

export const OPERATOR_TOKEN_FILE = 'operator-token'

/** Constant-time comparison of a presented operator token with the real one. */
export function tokenMatches(presented: unknown, token: string): boolean {
  if (typeof presented !== 'string' || presented.length === 0) return false
  const given = Buffer.from(presented)
  const expected = Buffer.from(token)
  return given.length === expected.length && timingSafeEqual(given, expected)
}

/** Constant-time check of an `Authorization: Bearer <token>` header. */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const m = /^Bearer\s+(\S+)$/i.exec(header ?? '')
  return m !== null && tokenMatches(m[1], token)
}

/**
 * The operator token as the gateway sees it: SERVICE_OPERATOR_TOKEN, or the
 * file the approver generated in the data dir (read on each use, so a token
 * created after the gateway started counts). null: no token exists yet.
 */
export function currentOperatorToken(env: Record<string, string | undefined>, dataDir: string): string | null {
  const fromEnv = env.SERVICE_OPERATOR_TOKEN?.trim()
  if (fromEnv) return fromEnv
  const file = path.join(dataDir, OPERATOR_TOKEN_FILE)
  if (!existsSync(file)) return null
  const token = readFileSync(file, 'utf8').trim()
  return token.length > 0 ? token : null
}
