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
export type TokenProblem = 'unknown' | 'expired' | 'consumed' | 'hash_mismatch' | 'intent_mismatch' | 'issued_before_replaced'

export interface ApprovalTokens {
  mint(binding: TokenBinding & { intentId: string }, nowMs: number): IssuedToken
  /**
   * Read-only check, used before the signature is made. With `issuedAfter`
   * (a replacement: the replaced signature's time), a token issued at or
   * before it is refused: only an approval given after the transaction it
   * replaces was signed may authorise the replacement.
   */
  check(id: string, binding: TokenBinding, nowMs: number, issuedAfter?: number): TokenProblem | null
  /**
   * Verifies and consumes in one conditional UPDATE: succeeds for exactly one
   * caller. Call inside the transaction that stores the signature.
   */
  consume(id: string, binding: TokenBinding, nowMs: number, issuedAfter?: number): TokenProblem | null
  /** Drops consumed tokens and expired ones (by either clock), rows and all; returns how many. */
  sweep(nowMs: number): number
}

interface Row {
  id: string
  tx_request_hash: string
  intent_hash: string | null
  issued_at: number
  expires_at: number
  consumed_at: number | null
}

/**
 * Tokens live APPROVAL_TOKEN_TTL_MS by the wall clock (expires_at, which
 * survives a restart) and by a monotonic clock too (`monotonicMs`,
 * performance.now by default): found by review, a clock stepped back an hour
 * left a token usable for that hour plus its 300 s, since the wall clock then
 * reads every expires_at as far ahead. Tokens minted by this process get
 * their monotonic deadline when minted; those already in signer.db at start
 * get what is left of their life as of `startMs`, the time at start as the
 * row times give it (never behind the latest time the database holds), so
 * that a step back across a restart does not lengthen it either.
 */
export function createApprovalTokens(db: Database.Database, monotonicMs: () => number = () => performance.now(), startMs: number = Date.now()): ApprovalTokens {
  const deadlines = new Map<string, number>()
  const startedAt = monotonicMs()
  for (const { id, expires_at } of db.prepare<[], { id: string; expires_at: number }>('SELECT id, expires_at FROM approval_tokens WHERE consumed_at IS NULL').all()) {
    deadlines.set(id, startedAt + Math.min(Math.max(expires_at - startMs, 0), APPROVAL_TOKEN_TTL_MS))
  }
  // Every unconsumed row has a deadline here (minted by this process, or
  // loaded at start); one without is past it rather than unbounded.
  const pastDeadline = (id: string) => {
    const d = deadlines.get(id)
    return d === undefined || monotonicMs() >= d
  }
  const insert = db.prepare(
    'INSERT INTO approval_tokens (id, tx_request_hash, intent_hash, intent_id, issued_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)',
  )
  const byId = db.prepare<[string], Row>('SELECT id, tx_request_hash, intent_hash, issued_at, expires_at, consumed_at FROM approval_tokens WHERE id = ?')
  // A token minted before intent binding existed has no intent_hash and matches nothing.
  const consumeStmt = db.prepare(
    'UPDATE approval_tokens SET consumed_at = ? WHERE id = ? AND tx_request_hash = ? AND intent_hash = ? AND consumed_at IS NULL AND expires_at > ? AND issued_at > ?',
  )
  const sweepStmt = db.prepare('DELETE FROM approval_tokens WHERE consumed_at IS NOT NULL OR expires_at <= ?')
  const dropTokens = db.prepare<[string]>('DELETE FROM approval_tokens WHERE id IN (SELECT value FROM json_each(?))')

  const sweepAll = db.transaction((lapsed: string[], nowMs: number): number => {
    const dropped = lapsed.length > 0 ? dropTokens.run(JSON.stringify(lapsed)).changes : 0
    return dropped + sweepStmt.run(nowMs).changes
  })

  const diagnose = (id: string, b: TokenBinding, nowMs: number, issuedAfter = -Infinity): TokenProblem | null => {
    const row = byId.get(id)
    if (!row) return 'unknown'
    if (row.consumed_at !== null) return 'consumed'
    if (row.expires_at <= nowMs || pastDeadline(id)) return 'expired'
    if (row.tx_request_hash !== b.txRequestHash.toLowerCase()) return 'hash_mismatch'
    if (row.intent_hash !== b.intentHash.toLowerCase()) return 'intent_mismatch'
    if (row.issued_at <= issuedAfter) return 'issued_before_replaced'
    return null
  }

  return {
    mint({ txRequestHash, intentHash, intentId }, nowMs) {
      const token = { id: randomUUID(), txRequestHash: txRequestHash.toLowerCase(), intentHash: intentHash.toLowerCase(), intentId, expiresAt: nowMs + APPROVAL_TOKEN_TTL_MS }
      insert.run(token.id, token.txRequestHash, token.intentHash, intentId, nowMs, token.expiresAt)
      deadlines.set(token.id, monotonicMs() + APPROVAL_TOKEN_TTL_MS)
      return token
    },
    check: diagnose,
    consume(id, b, nowMs, issuedAfter) {
      // SQLite compares an integer column with -9.2e18 as with any number; -Infinity would not bind.
      const after = issuedAfter ?? Number.MIN_SAFE_INTEGER
      if (pastDeadline(id)) return diagnose(id, b, nowMs, issuedAfter) ?? 'expired'
      const changed = consumeStmt.run(nowMs, id, b.txRequestHash.toLowerCase(), b.intentHash.toLowerCase(), nowMs, after).changes
      return changed === 1 ? null : diagnose(id, b, nowMs, issuedAfter) ?? 'consumed'
    },
    sweep(nowMs) {
      // A token past its monotonic deadline goes with its row: found by
      // review, forgetting only the deadline while a clock stepped back kept
      // the row's expires_at ahead made the lapsed token valid again.
      // One statement in one transaction: every token minted since the last sweep lapses by it, and a
      // DELETE each, each its own commit, held the event loop for as many commits under load.
      const now = monotonicMs()
      const lapsed: string[] = []
      for (const [id, d] of deadlines) {
        if (d > now) continue
        lapsed.push(id)
        deadlines.delete(id)
      }
      return sweepAll(lapsed, nowMs)
    },
  }
}
