import type Database from 'better-sqlite3'

/**
 * How each aggregator intent was built, kept by intent id (with a hash of the
 * intent, so a reused id with other content is not mistaken for it): the
 * quote's calldata, or the reason it fell back to v3. Build, preflight,
 * approve-request and sign-and-send then all produce the same transaction,
 * and the operator's approval matches what gets signed.
 */
export interface StoredRoute {
  intentHash: string
  path: 'aggregator' | 'v3_router'
  to: string | null
  data: string | null
  fallbackReason: string | null
  /** On the aggregator path: what the v3 route would have delivered (base units), shown beside the aggregator's minimum. */
  v3AmountOut?: string | null
}

export interface SwapRoutes {
  get(intentId: string): StoredRoute | undefined
  put(intentId: string, route: StoredRoute, nowMs: number): void
}

export function createSwapRoutes(db: Database.Database): SwapRoutes {
  db.exec(`CREATE TABLE IF NOT EXISTS swap_routes (
    intent_id       TEXT PRIMARY KEY,
    intent_hash     TEXT NOT NULL,
    path            TEXT NOT NULL,
    tx_to           TEXT,
    tx_data         TEXT,
    fallback_reason TEXT,
    created_at      INTEGER NOT NULL
  )`)
  // Databases made before the v3 comparison (aggregatorPrice) get its column.
  const columns = db.prepare<[], { name: string }>('PRAGMA table_info(swap_routes)').all()
  if (!columns.some((c) => c.name === 'v3_amount_out')) db.exec('ALTER TABLE swap_routes ADD COLUMN v3_amount_out TEXT')
  const get = db.prepare<[string], { intent_hash: string; path: 'aggregator' | 'v3_router'; tx_to: string | null; tx_data: string | null; fallback_reason: string | null; v3_amount_out: string | null }>(
    'SELECT intent_hash, path, tx_to, tx_data, fallback_reason, v3_amount_out FROM swap_routes WHERE intent_id = ?',
  )
  const put = db.prepare(
    'INSERT OR REPLACE INTO swap_routes (intent_id, intent_hash, path, tx_to, tx_data, fallback_reason, v3_amount_out, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  )
  return {
    get(intentId) {
      const r = get.get(intentId)
      return r && { intentHash: r.intent_hash, path: r.path, to: r.tx_to, data: r.tx_data, fallbackReason: r.fallback_reason, v3AmountOut: r.v3_amount_out }
    },
    put(intentId, r, nowMs) {
      put.run(intentId, r.intentHash, r.path, r.to, r.data, r.fallbackReason, r.v3AmountOut ?? null, nowMs)
    },
  }
}
