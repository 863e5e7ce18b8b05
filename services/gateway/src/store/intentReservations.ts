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
  // the concurrent pipeline, bench/RESULTS.md). `ends` is a min-heap of [end, id], one entry a write (an
  // extended hold leaves its older entry behind, skipped when it comes up): `sweep` drops from memory exactly
  // what `dropExpired` drops from the file, even after the clock stepped back (found by review: a sweep in
  // the map's order stopped at the first live hold and kept expired ones behind it).
  const holds = new Map<string, Hold>()
  const ends = createEndHeap()
  for (const r of db.prepare<[], { intent_id: string; intent_hash: string; expires_at: number }>('SELECT intent_id, intent_hash, expires_at FROM intent_reservations').all()) {
    holds.set(r.intent_id, { intentHash: r.intent_hash, expiresAt: r.expires_at })
    ends.push(r.expires_at, r.intent_id)
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
    for (let next = ends.peek(); next !== undefined && next[0] <= nowMs; next = ends.peek()) {
      ends.pop()
      const [end, id] = next
      if (holds.get(id)?.expiresAt === end) holds.delete(id)
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
      holds.set(intentId, { intentHash, expiresAt })
      ends.push(expiresAt, intentId)
      return true
    },
  }
}

/** A binary min-heap of [end, intent id] by end. */
function createEndHeap() {
  const heap: Array<[number, string]> = []
  const swap = (a: number, b: number) => ([heap[a], heap[b]] = [heap[b]!, heap[a]!])
  return {
    peek: (): [number, string] | undefined => heap[0],
    push(end: number, id: string): void {
      heap.push([end, id])
      for (let i = heap.length - 1; i > 0; ) {
        const parent = (i - 1) >> 1
        if (heap[parent]![0] <= heap[i]![0]) break
        swap(i, parent)
        i = parent
      }
    },
    pop(): void {
      const last = heap.pop()
      if (last === undefined || heap.length === 0) return
      heap[0] = last
      for (let i = 0; ; ) {
        const l = 2 * i + 1
        const r = l + 1
        let least = i
        if (l < heap.length && heap[l]![0] < heap[least]![0]) least = l
        if (r < heap.length && heap[r]![0] < heap[least]![0]) least = r
        if (least === i) break
        swap(i, least)
        i = least
      }
    },
  }
}
