import Database from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import { createSwapRoutes } from './swapRoutes.js'

describe('swapRoutes', () => {
  it('keeps the v3 figure beside an aggregator route, and gives a database from before it the column', () => {
    const db = new Database(':memory:')
    // The table as it was before the v3 comparison, with a route in it.
    db.exec(`CREATE TABLE swap_routes (intent_id TEXT PRIMARY KEY, intent_hash TEXT NOT NULL, path TEXT NOT NULL, tx_to TEXT, tx_data TEXT, fallback_reason TEXT, created_at INTEGER NOT NULL)`)
    db.prepare('INSERT INTO swap_routes VALUES (?, ?, ?, ?, ?, ?, ?)').run('old', 'h', 'aggregator', '0x1', '0x2', null, 1)
    const routes = createSwapRoutes(db)
    expect(routes.get('old')).toEqual({ intentHash: 'h', path: 'aggregator', to: '0x1', data: '0x2', fallbackReason: null, v3AmountOut: null })
    routes.put('new', { intentHash: 'h2', path: 'aggregator', to: '0x1', data: '0x2', fallbackReason: null, v3AmountOut: '498' }, 2)
    expect(routes.get('new')?.v3AmountOut).toBe('498')
    // Opening it again changes nothing.
    expect(createSwapRoutes(db).get('new')?.v3AmountOut).toBe('498')
  })
})
