import type Database from 'better-sqlite3'
import { RATE_LIMIT_WINDOW_MS, type AuditLog } from '@countersign/shared'

/**
 * Per-wallet records of intents that policy did not deny (SPEC "Rate-limit
 * rule"). One record per intent id, so build, approve and sign of one intent
 * count once; wallets are compared lowercased.
 *
 * The records of the last hour live in memory, so counting costs no query.
 * They are not written anywhere of their own: every evaluation writes a
 * `policy_evaluated` audit event with the wallet and the decision, committed
 * (synchronous=FULL) before the caller is answered, and at start the window
 * is rebuilt from those events (rateRecordsFromAudit). A restart therefore
 * does not reset the limit, and the request path has no second SQLite write:
 * a transaction per tick into gateway.db cost a fifth of the build
 * throughput (bench/RESULTS.md).
 */
export interface RateLimitStore {
  /** Records of this wallet in the sliding window, not counting `intentId` itself, up to `cap`. */
  countOthers(wallet: string, intentId: string, nowMs: number, cap: number): number
  record(wallet: string, intentId: string, nowMs: number): void
  /** Count and record happen in one synchronous step: nothing can interleave. */
  atomically<T>(fn: () => T): T
}

export interface RateRecord {
  wallet: string
  intentId: string
  atMs: number
}

/** How often records that left the window are dropped from memory. */
const PRUNE_EVERY_MS = 60_000

export function createRateLimitStore(seed: Iterable<RateRecord> = []): RateLimitStore {
  const byWallet = new Map<string, Map<string, number>>()
  let lastPrune = 0

  function add(wallet: string, intentId: string, atMs: number): boolean {
    const w = wallet.toLowerCase()
    let m = byWallet.get(w)
    if (!m) byWallet.set(w, (m = new Map()))
    if (m.has(intentId)) return false
    m.set(intentId, atMs)
    return true
  }
  // The oldest first, so that an intent seen twice keeps its first record.
  for (const r of [...seed].sort((a, b) => a.atMs - b.atMs)) add(r.wallet, r.intentId, r.atMs)

  function prune(nowMs: number): void {
    lastPrune = nowMs
    const before = nowMs - RATE_LIMIT_WINDOW_MS
    for (const [wallet, m] of byWallet) {
      for (const [id, at] of m) if (at <= before) m.delete(id)
      if (m.size === 0) byWallet.delete(wallet)
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
      add(wallet, intentId, nowMs)
      if (nowMs - lastPrune > PRUNE_EVERY_MS) prune(nowMs)
    },
    atomically(fn) {
      return fn()
    },
  }
}

/** The store a gateway starts with: the window rebuilt from the audit log, plus any first-layout records. */
export function openRateLimitStore(audit: Pick<AuditLog, 'eventsSince'>, db: Database.Database, nowMs: number): RateLimitStore {
  return createRateLimitStore([...rateRecordsFromAudit(audit, nowMs), ...legacyRateRecords(db, nowMs)])
}

/** The window's records, from the `policy_evaluated` events of the last hour that did not deny. */
export function rateRecordsFromAudit(audit: Pick<AuditLog, 'eventsSince'>, nowMs: number): RateRecord[] {
  const records: RateRecord[] = []
  for (const e of audit.eventsSince('policy_evaluated', nowMs - RATE_LIMIT_WINDOW_MS)) {
    const { wallet, decision } = e.data
    // Events written before they carried the wallet cannot be attributed;
    // legacyRateRecords covers that hour.
    if (typeof wallet !== 'string' || decision === 'deny') continue
    records.push({ wallet, intentId: e.intentId, atMs: e.timestamp })
  }
  return records
}

/**
 * Records of the first layout, which kept them in gateway.db (rate_records):
 * those of the last hour, read once at start. The table is dropped once none
 * of its records is inside the window any more.
 */
export function legacyRateRecords(db: Database.Database, nowMs: number): RateRecord[] {
  const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'rate_records'").get()
  if (!table) return []
  const records = db
    .prepare<[number], RateRecord>('SELECT wallet, intent_id AS intentId, at_ms AS atMs FROM rate_records WHERE at_ms > ?')
    .all(nowMs - RATE_LIMIT_WINDOW_MS)
  if (records.length === 0) db.exec('DROP TABLE rate_records')
  return records
}
