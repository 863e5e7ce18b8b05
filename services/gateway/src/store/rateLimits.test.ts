import { mkdtempSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import Database from 'better-sqlite3'
import { openAuditLog, type AuditLog } from '@countersign/shared'
import { afterEach, describe, expect, it } from 'vitest'
import { openGatewayDb } from './gatewayDb.js'
import { createRateLimitStore, legacyRateRecords, rateRecordsFromAudit } from './rateLimits.js'

const HOUR = 3_600_000
const T0 = Date.UTC(2026, 10, 23, 12, 0, 0)
const WALLET = '0xAbCdEf0000000000000000000000000000000001'
const OTHER = '0x3333333333333333333333333333333333333333'

const toClose: Array<{ close(): unknown }> = []
afterEach(async () => {
  for (const c of toClose.splice(0)) await c.close()
})

const tempDir = () => mkdtempSync(path.join(os.tmpdir(), 'cs-rate-'))

describe('the rate-limit window', () => {
  it('counts per wallet in any case, once per intent id, up to the cap', () => {
    const store = createRateLimitStore()
    store.record(WALLET, 'a', T0)
    store.record(WALLET.toLowerCase(), 'a', T0 + 5)
    store.record(`0x${WALLET.slice(2).toUpperCase()}`, 'b', T0 + 10)
    store.record(OTHER, 'c', T0 + 10)
    expect(store.countOthers(WALLET, 'new', T0 + 20, 10)).toBe(2)
    expect(store.countOthers(WALLET, 'a', T0 + 20, 10)).toBe(1)
    expect(store.countOthers(WALLET, 'new', T0 + 20, 1)).toBe(1)
    expect(store.countOthers(OTHER, 'new', T0 + 20, 10)).toBe(1)
  })

  it('lets a record go exactly 3,600,000 ms after it was made, counted from its first sighting', () => {
    const store = createRateLimitStore([{ wallet: WALLET, intentId: 'a', atMs: T0 }])
    store.record(WALLET, 'a', T0 + 1000)
    expect(store.countOthers(WALLET, 'x', T0 + HOUR - 1, 10)).toBe(1)
    expect(store.countOthers(WALLET, 'x', T0 + HOUR, 10)).toBe(0)
    // Recording long after drops what left the window; a later record of the same id is new.
    store.record(WALLET, 'b', T0 + HOUR + 61_000)
    store.record(WALLET, 'a', T0 + HOUR + 62_000)
    expect(store.countOthers(WALLET, 'x', T0 + HOUR + 63_000, 10)).toBe(2)
  })
})

describe('rebuilding the window from the audit log', () => {
  async function auditAt(dir: string, clock: () => number): Promise<AuditLog> {
    const audit = openAuditLog(path.join(dir, 'audit.db'), { clock })
    toClose.push(audit)
    return audit
  }

  it('takes the policy_evaluated events of the last hour that did not deny, with their wallet, time and intent', async () => {
    let now = T0
    const audit = await auditAt(tempDir(), () => now)
    const evaluated = (intentId: string, decision: string, wallet: string | undefined) =>
      audit.append({ intentId, event: 'policy_evaluated', data: { decision, reasons: [], reasonCodes: [], ...(wallet ? { wallet } : {}) } })
    await evaluated('too-old', 'allow', WALLET)
    now = T0 + 10 * 60_000
    await evaluated('allowed', 'allow', WALLET)
    await audit.append({ intentId: 'allowed', event: 'tx_built', data: { txRequestHash: '0x00', description: 'x' } })
    await evaluated('needs-approval', 'require_approval', WALLET.toLowerCase())
    await evaluated('denied', 'deny', WALLET)
    await evaluated('no-wallet', 'allow', undefined)
    await evaluated('other', 'allow', OTHER)

    const nowMs = T0 + HOUR + 1
    const records = rateRecordsFromAudit(audit, nowMs)
    expect(records.map((r) => r.intentId).sort()).toEqual(['allowed', 'needs-approval', 'other'])
    expect(records.find((r) => r.intentId === 'allowed')).toEqual({ wallet: WALLET, intentId: 'allowed', atMs: T0 + 10 * 60_000 })
    const store = createRateLimitStore(records)
    expect(store.countOthers(WALLET, 'new', nowMs, 10)).toBe(2)
    expect(store.countOthers(OTHER, 'new', nowMs, 10)).toBe(1)
  })

  it('walks back from the newest row, past stamps up to 10 minutes out of order, and stops at an older one', async () => {
    let now = T0 + 5 * HOUR
    const audit = await auditAt(tempDir(), () => now)
    const append = (intentId: string) => audit.append({ intentId, event: 'policy_evaluated', data: { decision: 'allow', reasons: [], wallet: WALLET } })
    const since = T0 + 4 * HOUR
    await append('behind-the-old-row')
    now = T0 // a row stamped far earlier (a stepped clock): the walk ends here
    await append('old')
    now = since - 5 * 60_000 // out of order by 5 minutes: passed over, not taken
    await append('slightly-behind')
    now = T0 + 5 * HOUR
    await append('newest')
    expect(audit.eventsSince('policy_evaluated', since).map((e) => e.intentId)).toEqual(['newest'])
    expect(audit.eventsSince('policy_evaluated', T0 - 1).map((e) => e.intentId)).toEqual(['newest', 'slightly-behind', 'old', 'behind-the-old-row'])
  })
})

describe('records of the first layout (gateway.db rate_records)', () => {
  function dbWithLegacyRows(rows: Array<[string, string, number]>): { file: string } {
    const file = path.join(tempDir(), 'gateway.db')
    const old = new Database(file)
    old.exec(`
      CREATE TABLE rate_records (wallet TEXT NOT NULL, intent_id TEXT NOT NULL, at_ms INTEGER NOT NULL, PRIMARY KEY (wallet, intent_id));
      CREATE INDEX rate_records_by_time ON rate_records (wallet, at_ms);
    `)
    for (const r of rows) old.prepare('INSERT INTO rate_records VALUES (?, ?, ?)').run(...r)
    old.close()
    return { file }
  }
  const legacyTables = (db: Database.Database) => db.prepare("SELECT name FROM sqlite_master WHERE name LIKE 'rate_records%'").all()

  it('are counted while they are inside the window, and the table is dropped once none is', () => {
    const { file } = dbWithLegacyRows([
      [WALLET.toLowerCase(), 'a', T0 - HOUR],
      [WALLET.toLowerCase(), 'b', T0 + 1],
    ])
    let db = openGatewayDb(file)
    const records = legacyRateRecords(db, T0 + 2)
    expect(records).toEqual([{ wallet: WALLET.toLowerCase(), intentId: 'b', atMs: T0 + 1 }])
    expect(createRateLimitStore(records).countOthers(WALLET, 'new', T0 + 2, 10)).toBe(1)
    expect(legacyTables(db)).toHaveLength(2)
    db.close()

    db = openGatewayDb(file)
    toClose.push(db)
    expect(legacyRateRecords(db, T0 + 1 + HOUR)).toEqual([])
    expect(legacyTables(db)).toEqual([])
    expect(legacyRateRecords(db, T0 + 2 * HOUR)).toEqual([])
  })
})
