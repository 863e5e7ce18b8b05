import { timingSafeEqual } from 'node:crypto'

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
