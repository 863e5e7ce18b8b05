import { mkdtempSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { openGatewayDb } from './gatewayDb.js'
import { createRateLimitStore } from './rateLimits.js'

const HOUR = 3_600_000
const T0 = Date.UTC(2026, 10, 23, 12, 0, 0)
const WALLET = '0xAbCdEf0000000000000000000000000000000001'

const open: Database.Database[] = []
afterEach(() => {
  for (const db of open.splice(0)) db.close()
})

function tempDbFile(): string {
  return path.join(mkdtempSync(path.join(os.tmpdir(), 'cs-rate-')), 'gateway.db')
}

function openDb(file: string): Database.Database {
  const db = openGatewayDb(file)
  open.push(db)
  return db
}

const rows = (db: Database.Database) =>
  db.prepare('SELECT wallet, intent_id AS intentId, at_ms AS atMs FROM rate_limit_records ORDER BY rowid').all()

describe('rate-limit records', () => {
  it('count per wallet in any case, once per intent id, and are written once', () => {
    const db = openDb(tempDbFile())
    const store = createRateLimitStore(db, { nowMs: T0 })
    store.record(WALLET, 'a', T0)
    store.record(WALLET.toLowerCase(), 'a', T0 + 5)
    store.record(WALLET.toUpperCase().replace('0X', '0x'), 'b', T0 + 10)
    store.flush()
    expect(store.countOthers(WALLET, 'c', T0 + 20, 10)).toBe(2)
    expect(store.countOthers(WALLET, 'a', T0 + 20, 10)).toBe(1)
    expect(store.countOthers(WALLET, 'c', T0 + 20, 1)).toBe(1)
    expect(rows(db)).toEqual([
      { wallet: WALLET.toLowerCase(), intentId: 'a', atMs: T0 },
      { wallet: WALLET.toLowerCase(), intentId: 'b', atMs: T0 + 10 },
    ])
  })

  it('survive a restart, and an intent seen before the restart is not recorded again', () => {
    const file = tempDbFile()
    const first = createRateLimitStore(openDb(file), { nowMs: T0 })
    first.record(WALLET, 'a', T0)
    first.flush()
    open.pop()!.close()

    const db = openDb(file)
    const again = createRateLimitStore(db, { nowMs: T0 + 1000 })
    expect(again.countOthers(WALLET, 'z', T0 + 1000, 10)).toBe(1)
    again.record(WALLET, 'a', T0 + 1000)
    again.flush()
    expect(rows(db)).toHaveLength(1)
  })

  it('leave the sliding hour exactly 3,600,000 ms after they were made, and are pruned from the file', () => {
    const db = openDb(tempDbFile())
    const store = createRateLimitStore(db, { nowMs: T0 })
    store.record(WALLET, 'a', T0)
    store.flush()
    expect(store.countOthers(WALLET, 'x', T0 + HOUR - 1, 10)).toBe(1)
    expect(store.countOthers(WALLET, 'x', T0 + HOUR, 10)).toBe(0)
    // The next write more than a minute after the last prune drops what left the window.
    store.record(WALLET, 'b', T0 + HOUR + 61_000)
    store.flush()
    expect(rows(db)).toEqual([{ wallet: WALLET.toLowerCase(), intentId: 'b', atMs: T0 + HOUR + 61_000 }])
  })

  it('are moved over from the first layout (rate_records keyed by wallet and intent) when the file is opened', () => {
    const file = tempDbFile()
    const old = new Database(file)
    old.exec(`
      CREATE TABLE rate_records (wallet TEXT NOT NULL, intent_id TEXT NOT NULL, at_ms INTEGER NOT NULL, PRIMARY KEY (wallet, intent_id));
      CREATE INDEX rate_records_by_time ON rate_records (wallet, at_ms);
    `)
    old.prepare('INSERT INTO rate_records VALUES (?, ?, ?)').run(WALLET.toLowerCase(), 'a', T0)
    old.prepare('INSERT INTO rate_records VALUES (?, ?, ?)').run(WALLET, 'b', T0 + 1)
    old.close()

    const db = openDb(file)
    expect(db.prepare("SELECT name FROM sqlite_master WHERE name LIKE 'rate_records%'").all()).toEqual([])
    const store = createRateLimitStore(db, { nowMs: T0 + 2 })
    expect(store.countOthers(WALLET, 'c', T0 + 2, 10)).toBe(2)
    // Opening again finds nothing left to move.
    open.pop()!.close()
    expect(rows(openDb(file))).toHaveLength(2)
  })
})
