import { randomUUID } from 'node:crypto'
import type Database from 'better-sqlite3'
import { APPROVAL_TOKEN_TTL_MS } from '@countersign/shared'

/** What a token authorises: one transaction (txRequestHash) for one exact intent (intentHash). */
export interface TokenBinding {
  txRequestHash: string
  intentHash: string
}

export interface IssuedToken extends TokenBinding {
  id: string
  intentId: string
  expiresAt: number
}

/** Why a token cannot authorise a signature; all map to 403 invalid_approval_token. */
export type TokenProblem = 'unknown' | 'expired' | 'consumed' | 'hash_mismatch' | 'intent_mismatch'

export interface ApprovalTokens {
  mint(binding: TokenBinding & { intentId: string }, nowMs: number): IssuedToken
  /** Read-only check, used before the signature is made. */
  check(id: string, binding: TokenBinding, nowMs: number): TokenProblem | null
  /**
   * Verifies and consumes in one conditional UPDATE: succeeds for exactly one
   * caller. Call inside the transaction that stores the signature.
   */
  consume(id: string, binding: TokenBinding, nowMs: number): TokenProblem | null
  /** Drops consumed and expired tokens; returns how many. */
  sweep(nowMs: number): number
}

interface Row {
  id: string
  tx_request_hash: string
  intent_hash: string | null
  expires_at: number
  consumed_at: number | null
}

export function createApprovalTokens(db: Database.Database): ApprovalTokens {
  const insert = db.prepare(
    'INSERT INTO approval_tokens (id, tx_request_hash, intent_hash, intent_id, issued_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)',
  )
  const byId = db.prepare<[string], Row>('SELECT id, tx_request_hash, intent_hash, expires_at, consumed_at FROM approval_tokens WHERE id = ?')
  // A token minted before intent binding existed has no intent_hash and matches nothing.
  const consumeStmt = db.prepare(
    'UPDATE approval_tokens SET consumed_at = ? WHERE id = ? AND tx_request_hash = ? AND intent_hash = ? AND consumed_at IS NULL AND expires_at > ?',
  )
  const sweepStmt = db.prepare('DELETE FROM approval_tokens WHERE consumed_at IS NOT NULL OR expires_at <= ?')

  const diagnose = (id: string, b: TokenBinding, nowMs: number): TokenProblem | null => {
    const row = byId.get(id)
    if (!row) return 'unknown'
    if (row.consumed_at !== null) return 'consumed'
    if (row.expires_at <= nowMs) return 'expired'
    if (row.tx_request_hash !== b.txRequestHash.toLowerCase()) return 'hash_mismatch'
    if (row.intent_hash !== b.intentHash.toLowerCase()) return 'intent_mismatch'
    return null
  }

  return {
    mint({ txRequestHash, intentHash, intentId }, nowMs) {
      const token = { id: randomUUID(), txRequestHash: txRequestHash.toLowerCase(), intentHash: intentHash.toLowerCase(), intentId, expiresAt: nowMs + APPROVAL_TOKEN_TTL_MS }
      insert.run(token.id, token.txRequestHash, token.intentHash, intentId, nowMs, token.expiresAt)
      return token
    },
    check: diagnose,
    consume(id, b, nowMs) {
      const changed = consumeStmt.run(nowMs, id, b.txRequestHash.toLowerCase(), b.intentHash.toLowerCase(), nowMs).changes
      return changed === 1 ? null : diagnose(id, b, nowMs) ?? 'consumed'
    },
    sweep(nowMs) {
      return sweepStmt.run(nowMs).changes
    },
  }
}
