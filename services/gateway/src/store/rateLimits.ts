import type Database from 'better-sqlite3'
import { RATE_LIMIT_WINDOW_MS } from '@countersign/shared'

/**
 * Per-wallet records of intents that policy did not deny (SPEC "Rate-limit
 * rule"). One record per intent id, so build, approve and sign of one intent
 * count once; wallets are compared lowercased.
 */
export interface RateLimitStore {
  /** Records of this wallet in the sliding window, not counting `intentId` itself. */
  countOthers(wallet: string, intentId: string, nowMs: number): number
  record(wallet: string, intentId: string, nowMs: number): void
  /** Runs `fn` in one SQLite transaction so count and record cannot interleave. */
  atomically<T>(fn: () => T): T
}

export function createRateLimitStore(db: Database.Database): RateLimitStore {
  const count = db.prepare<[string, string, number], { n: number }>(
    'SELECT COUNT(*) AS n FROM rate_records WHERE wallet = ? AND intent_id <> ? AND at_ms > ?',
  )
  const insert = db.prepare('INSERT OR IGNORE INTO rate_records (wallet, intent_id, at_ms) VALUES (?, ?, ?)')
  const prune = db.prepare('DELETE FROM rate_records WHERE at_ms <= ?')
  let lastPrune = 0
  return {
    countOthers(wallet, intentId, nowMs) {
      return count.get(wallet.toLowerCase(), intentId, nowMs - RATE_LIMIT_WINDOW_MS)?.n ?? 0
    },
    record(wallet, intentId, nowMs) {
      insert.run(wallet.toLowerCase(), intentId, nowMs)
      // Records older than the window never count again; drop them now and then.
      if (nowMs - lastPrune > 60_000) {
        prune.run(nowMs - RATE_LIMIT_WINDOW_MS)
        lastPrune = nowMs
      }
    },
    atomically(fn) {
      return db.transaction(fn).immediate()
    },
  }
}
