import type Database from 'better-sqlite3'

/**
 * Intent ids held for the exact intent (its intentHash) an approval request
 * was made for, in gateway.db so that a restart keeps them. The id of a
 * waiting request is public (the pending list shows it); without this, anyone
 * could sign another body under it first (an amount of 0 needs no approval),
 * and the intent the operator then approved could never be signed: the id
 * belongs to whoever signs first.
 */
export interface IntentReservations {
  /**
   * Whether `intentId` is held, at `nowMs`, for an intent other than
   * `intentHash` (a function is called only when the id is held: hashing the
   * whole intent on every build would cost more than the lookup).
   */
  heldForAnother(intentId: string, intentHash: string | (() => string), nowMs: number): boolean
  /**
   * Holds `intentId` for `intentHash` until `untilMs` (a live hold of the
   * same hash is extended, never shortened); false, and nothing changed, when
   * it is held for another hash. Expired holds are dropped on the way.
   */
  reserve(intentId: string, intentHash: string, nowMs: number, untilMs: number): boolean
}

interface Hold {
  intentHash: string
  expiresAt: number
}

export function createIntentReservations(db: Database.Database): IntentReservations {
  db.exec(`
    CREATE TABLE IF NOT EXISTS intent_reservations (
      intent_id   TEXT PRIMARY KEY,
      intent_hash TEXT    NOT NULL,
      expires_at  INTEGER NOT NULL
    );
    CREATE INDEX IF NOT EXISTS intent_reservations_expiry ON intent_reservations (expires_at);
  `)
  // The table is this process's alone (gateway.db has one writer), so its rows are mirrored in memory and only
  // written through: with holds live, every build and sign read the table (1.5 % of the gateway's CPU under
  // the concurrent pipeline, bench/RESULTS.md). In the order of their end, near enough: every hold lasts the
  // same time from its request, and one extended is moved to the back; `sweep` stops at the first live one.
  const holds = new Map<string, Hold>()
  for (const r of db.prepare<[], { intent_id: string; intent_hash: string; expires_at: number }>('SELECT intent_id, intent_hash, expires_at FROM intent_reservations ORDER BY expires_at').all()) {
    holds.set(r.intent_id, { intentHash: r.intent_hash, expiresAt: r.expires_at })
  }
  const dropExpired = db.prepare<[number]>('DELETE FROM intent_reservations WHERE expires_at <= ?')
  const hold = db.prepare<[string, string, number]>(
    'INSERT INTO intent_reservations (intent_id, intent_hash, expires_at) VALUES (?, ?, ?) ON CONFLICT (intent_id) DO UPDATE SET intent_hash = excluded.intent_hash, expires_at = excluded.expires_at',
  )
  const live = (intentId: string, nowMs: number): Hold | undefined => {
    const h = holds.get(intentId)
    return h !== undefined && h.expiresAt > nowMs ? h : undefined
  }
  const sweep = (nowMs: number): void => {
    for (const [id, h] of holds) {
      if (h.expiresAt > nowMs) break
      holds.delete(id)
    }
  }
  // One transaction: the expired rows go with the write, and a failed write leaves the mirror as it was.
  const write = db.transaction((intentId: string, intentHash: string, nowMs: number, expiresAt: number) => {
    dropExpired.run(nowMs)
    hold.run(intentId, intentHash, expiresAt)
  })
  return {
    heldForAnother(intentId, intentHash, nowMs) {
      const held = live(intentId, nowMs)
      return held !== undefined && held.intentHash !== (typeof intentHash === 'function' ? intentHash() : intentHash)
    },
    reserve(intentId, intentHash, nowMs, untilMs) {
      const held = live(intentId, nowMs)
      if (held && held.intentHash !== intentHash) return false
      const expiresAt = Math.max(untilMs, held?.expiresAt ?? 0)
      write(intentId, intentHash, nowMs, expiresAt)
      sweep(nowMs)
      holds.delete(intentId)
      holds.set(intentId, { intentHash, expiresAt })
      return true
    },
  }
}
