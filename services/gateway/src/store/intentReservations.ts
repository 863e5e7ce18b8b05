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

export function createIntentReservations(db: Database.Database): IntentReservations {
  db.exec(`
    CREATE TABLE IF NOT EXISTS intent_reservations (
      intent_id   TEXT PRIMARY KEY,
      intent_hash TEXT    NOT NULL,
      expires_at  INTEGER NOT NULL
    );
    CREATE INDEX IF NOT EXISTS intent_reservations_expiry ON intent_reservations (expires_at);
  `)
  const live = db.prepare<[string, number], { intent_hash: string; expires_at: number }>(
    'SELECT intent_hash, expires_at FROM intent_reservations WHERE intent_id = ? AND expires_at > ?',
  )
  const dropExpired = db.prepare<[number]>('DELETE FROM intent_reservations WHERE expires_at <= ?')
  const hold = db.prepare<[string, string, number]>(
    'INSERT INTO intent_reservations (intent_id, intent_hash, expires_at) VALUES (?, ?, ?) ON CONFLICT (intent_id) DO UPDATE SET intent_hash = excluded.intent_hash, expires_at = excluded.expires_at',
  )
  // When no hold can be live any more (none made for 600 s), a build asks nothing of the database.
  let lastExpiry = db.prepare<[], { last: number | null }>('SELECT max(expires_at) AS last FROM intent_reservations').get()?.last ?? 0
  // One transaction: the check and the write cannot be split by another request's.
  const reserve = db.transaction((intentId: string, intentHash: string, nowMs: number, untilMs: number): boolean => {
    dropExpired.run(nowMs)
    const held = live.get(intentId, nowMs)
    if (held && held.intent_hash !== intentHash) return false
    const expiresAt = Math.max(untilMs, held?.expires_at ?? 0)
    hold.run(intentId, intentHash, expiresAt)
    lastExpiry = Math.max(lastExpiry, expiresAt)
    return true
  })
  return {
    heldForAnother(intentId, intentHash, nowMs) {
      if (nowMs >= lastExpiry) return false
      const held = live.get(intentId, nowMs)
      return held !== undefined && held.intent_hash !== (typeof intentHash === 'function' ? intentHash() : intentHash)
    },
    reserve: (intentId, intentHash, nowMs, untilMs) => reserve(intentId, intentHash, nowMs, untilMs),
  }
}
