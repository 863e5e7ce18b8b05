import type Database from 'better-sqlite3'
import { RATE_LIMIT_WINDOW_MS } from '@countersign/shared'

/**
 * Per-wallet records of intents that policy did not deny (SPEC "Rate-limit
 * rule"). One record per intent id, so build, approve and sign of one intent
 * count once; wallets are compared lowercased.
 *
 * The gateway is the only writer of gateway.db, so the records of the last
 * hour live in memory (loaded at start) and counting costs no query; new
 * records are written to SQLite in one transaction per tick, so a restart
 * does not reset the limit.
 */
export interface RateLimitStore {
  /** Records of this wallet in the sliding window, not counting `intentId` itself, up to `cap`. */
  countOthers(wallet: string, intentId: string, nowMs: number, cap: number): number
  record(wallet: string, intentId: string, nowMs: number): void
  /** Count and record happen in one synchronous step: nothing can interleave. */
  atomically<T>(fn: () => T): T
  /** Writes pending records now (shutdown, tests). */
  flush(): void
}

export function createRateLimitStore(db: Database.Database, opts: { nowMs?: number } = {}): RateLimitStore {
  const insert = db.prepare('INSERT INTO rate_limit_records (wallet, intent_id, at_ms) VALUES (?, ?, ?)')
  const prune = db.prepare('DELETE FROM rate_limit_records WHERE at_ms <= ?')
  const recent = db.prepare<[number], { wallet: string; intent_id: string; at_ms: number }>(
    'SELECT wallet, intent_id, at_ms FROM rate_limit_records WHERE at_ms > ?',
  )
  const byWallet = new Map<string, Map<string, number>>()
  for (const r of recent.iterate((opts.nowMs ?? Date.now()) - RATE_LIMIT_WINDOW_MS)) {
    let m = byWallet.get(r.wallet)
    if (!m) byWallet.set(r.wallet, (m = new Map()))
    m.set(r.intent_id, r.at_ms)
  }

  let pending: Array<[string, string, number]> = []
  let scheduled = false
  let lastPrune = 0
  const writeAll = db.transaction((rows: Array<[string, string, number]>, pruneBefore: number | null) => {
    for (const r of rows) insert.run(...r)
    if (pruneBefore !== null) prune.run(pruneBefore)
  })

  function flush(): void {
    scheduled = false
    if (pending.length === 0) return
    const rows = pending
    pending = []
    const newest = rows[rows.length - 1]![2]
    // Records older than the window never count again; drop them now and then.
    const pruneBefore = newest - lastPrune > 60_000 ? newest - RATE_LIMIT_WINDOW_MS : null
    writeAll(rows, pruneBefore)
    if (pruneBefore !== null) {
      lastPrune = newest
      for (const [wallet, m] of byWallet) {
        for (const [id, at] of m) if (at <= pruneBefore) m.delete(id)
        if (m.size === 0) byWallet.delete(wallet)
      }
    }
  }

  return {
    countOthers(wallet, intentId, nowMs, cap) {
      const m = byWallet.get(wallet.toLowerCase())
      if (!m) return 0
      const since = nowMs - RATE_LIMIT_WINDOW_MS
      let n = 0
      for (const [id, at] of m) {
        if (at > since && id !== intentId && ++n >= cap) break
      }
      return n
    },
    record(wallet, intentId, nowMs) {
      const w = wallet.toLowerCase()
      let m = byWallet.get(w)
      if (!m) byWallet.set(w, (m = new Map()))
      if (m.has(intentId)) return
      m.set(intentId, nowMs)
      pending.push([w, intentId, nowMs])
      if (!scheduled) {
        scheduled = true
        setImmediate(flush)
      }
    },
    atomically(fn) {
      return fn()
    },
    flush,
  }
}
