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
export type TokenProblem = 'unknown' | 'expired' | 'consumed' | 'hash_mismatch' | 'intent_mismatch' | 'issued_before_replaced' | 'purpose_mismatch'

/**
 * The signature a sign call would replace (its txHash and time), or null for
 * a first signature. A token authorises only what it was minted for: an
 * approval the operator gave on a card that named the lost transaction
 * replaces that one, and no other approval replaces anything (found by
 * review: a second approval of an intent already signed and mined, asked on
 * an ordinary card, let a lying gateway have it paid twice).
 */
export type TokenPurpose = { replaces: string; replacedAt: number } | null

export interface ApprovalTokens {
  /** `replaces`: the txHash of the lost transaction the operator was asked to replace, when it was a replacement. */
  mint(binding: TokenBinding & { intentId: string; replaces?: string }, nowMs: number): IssuedToken
  /**
   * Read-only check, used before the signature is made. For a replacement,
   * the token must have been minted to replace that very transaction, after
   * it was signed (an approval given before cannot have been for it); for a
   * first signature (no purpose given), it must not have been minted for a replacement.
   */
  check(id: string, binding: TokenBinding, nowMs: number, purpose?: TokenPurpose): TokenProblem | null
  /**
   * Verifies and consumes in one conditional UPDATE: succeeds for exactly one
   * caller. Call inside the transaction that stores the signature.
   */
  consume(id: string, binding: TokenBinding, nowMs: number, purpose?: TokenPurpose): TokenProblem | null
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
  replaces_tx_hash: string | null
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
    'INSERT INTO approval_tokens (id, tx_request_hash, intent_hash, intent_id, issued_at, expires_at, replaces_tx_hash) VALUES (?, ?, ?, ?, ?, ?, ?)',
  )
  const byId = db.prepare<[string], Row>('SELECT id, tx_request_hash, intent_hash, issued_at, expires_at, consumed_at, replaces_tx_hash FROM approval_tokens WHERE id = ?')
  // A token minted before intent binding existed has no intent_hash and matches nothing.
  const consumeStmt = db.prepare(
    'UPDATE approval_tokens SET consumed_at = ? WHERE id = ? AND tx_request_hash = ? AND intent_hash = ? AND consumed_at IS NULL AND expires_at > ? AND issued_at > ? AND replaces_tx_hash IS ?',
  )
  const sweepStmt = db.prepare('DELETE FROM approval_tokens WHERE consumed_at IS NOT NULL OR expires_at <= ?')
  const dropTokens = db.prepare<[string]>('DELETE FROM approval_tokens WHERE id IN (SELECT value FROM json_each(?))')

  const sweepAll = db.transaction((lapsed: string[], nowMs: number): number => {
    const dropped = lapsed.length > 0 ? dropTokens.run(JSON.stringify(lapsed)).changes : 0
    return dropped + sweepStmt.run(nowMs).changes
  })

  const diagnose = (id: string, b: TokenBinding, nowMs: number, purpose: TokenPurpose = null): TokenProblem | null => {
    const row = byId.get(id)
    if (!row) return 'unknown'
    if (row.consumed_at !== null) return 'consumed'
    if (row.expires_at <= nowMs || pastDeadline(id)) return 'expired'
    if (row.tx_request_hash !== b.txRequestHash.toLowerCase()) return 'hash_mismatch'
    if (row.intent_hash !== b.intentHash.toLowerCase()) return 'intent_mismatch'
    if (purpose && row.issued_at <= purpose.replacedAt) return 'issued_before_replaced'
    if (row.replaces_tx_hash !== (purpose?.replaces.toLowerCase() ?? null)) return 'purpose_mismatch'
    return null
  }

  return {
    mint({ txRequestHash, intentHash, intentId, replaces }, nowMs) {
      const token = { id: randomUUID(), txRequestHash: txRequestHash.toLowerCase(), intentHash: intentHash.toLowerCase(), intentId, expiresAt: nowMs + APPROVAL_TOKEN_TTL_MS }
      insert.run(token.id, token.txRequestHash, token.intentHash, intentId, nowMs, token.expiresAt, replaces?.toLowerCase() ?? null)
      deadlines.set(token.id, monotonicMs() + APPROVAL_TOKEN_TTL_MS)
      return token
    },
    check: diagnose,
    consume(id, b, nowMs, purpose = null) {
      // SQLite compares an integer column with -9.2e18 as with any number; -Infinity would not bind.
      const after = purpose?.replacedAt ?? Number.MIN_SAFE_INTEGER
      if (pastDeadline(id)) return diagnose(id, b, nowMs, purpose) ?? 'expired'
      const changed = consumeStmt.run(nowMs, id, b.txRequestHash.toLowerCase(), b.intentHash.toLowerCase(), nowMs, after, purpose?.replaces.toLowerCase() ?? null).changes
      return changed === 1 ? null : diagnose(id, b, nowMs, purpose) ?? 'consumed'
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
