import { execFile } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { describeFailure } from '../operatorError.js'
import { AuditReadError, openAuditLog, type AuditLog } from './auditLog.js'
import { insertRawAuditRow, tamperAudit } from '../server/testing/auditTamper.js'
import { runAuditCli } from '../server/audit/cli.js'
import { AuditDataError } from './plainJson.js'
import { ensureAuditSchema } from './schema.js'
import { verifyAuditChain } from '../server/audit/verify.js'

const run = promisify(execFile)
const here = path.dirname(fileURLToPath(import.meta.url))
const compiledAuditLog = path.resolve(here, '../../dist/audit/auditLog.js')
const compiledCli = path.resolve(here, '../../dist/server/audit/cli.js')

let log: AuditLog | undefined
afterEach(async () => {
  await log?.close()
  log = undefined
})

function fresh() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cs-audit-'))
  return { dir, file: path.join(dir, 'audit.db') }
}

/** Runs `sql` with the append-only triggers dropped, then puts them back (verify reports them missing). */
function tamper(file: string, sql: string) {
  const db = new Database(file)
  db.exec('DROP TRIGGER audit_events_no_update; DROP TRIGGER audit_events_no_delete;')
  db.exec(sql)
  ensureAuditSchema(db)
  db.close()
}

describe('audit log', () => {
  it('appends events with the spec shape and lists them newest first', async () => {
    const { file } = fresh()
    let t = 1000
    log = openAuditLog(file, { clock: () => t++ })
    const a = await log.append({ intentId: 'i-1', event: 'policy_evaluated', data: { decision: 'allow', reasons: [] } })
    await log.append({ intentId: 'system', event: 'skill_registered', data: { skillName: 'x' } })
    expect(a).toMatchObject({ intentId: 'i-1', event: 'policy_evaluated', timestamp: 1000, data: { intentId: 'i-1', decision: 'allow', reasons: [] } })
    expect(a.id).toMatch(/^[0-9a-f-]{36}$/)
    const listed = log.list({ limit: 10 })
    expect(listed.map((e) => e.event)).toEqual(['skill_registered', 'policy_evaluated'])
    expect(listed[1]).toEqual(a)
    expect(log.list({ limit: 1 })).toHaveLength(1)
    expect(log.list({ limit: 10, intentId: 'i-1' }).map((e) => e.event)).toEqual(['policy_evaluated'])
  })

  it('eventsSince takes one name or several and finds them in one walk, newest first', async () => {
    const { file } = fresh()
    let t = 1000
    log = openAuditLog(file, { clock: () => t++ })
    await log.append({ intentId: 'a', event: 'signature_created', data: { txHash: '0x01' } })
    await log.append({ intentId: 'b', event: 'tx_built', data: { txRequestHash: '0x00', description: 'x' } })
    await log.append({ intentId: 'c', event: 'signature_replaced', data: { txHash: '0x02' } })
    await log.append({ intentId: 'd', event: 'signature_created', data: { txHash: '0x03' } })
    expect(log.eventsSince(['signature_created', 'signature_replaced'], 999).map((e) => e.intentId)).toEqual(['d', 'c', 'a'])
    expect(log.eventsSince('signature_created', 1000).map((e) => e.intentId)).toEqual(['d'])
    expect(log.eventsSince([], 0)).toEqual([])
  })

  it('a row whose data an outside edit made unreadable is named when read, not a JSON parse error', async () => {
    const { file } = fresh()
    log = openAuditLog(file)
    await log.append({ intentId: 'a', event: 'policy_evaluated', data: { wallet: '0x01' } })
    await log.append({ intentId: 'b', event: 'tx_built', data: {} })
    for (const broken of ["'not json'", "'[1]'", "'null'", "X'7b'"]) {
      tamperAudit(file, (db) => db.prepare(`UPDATE audit_events SET data = ${broken} WHERE seq = 1`).run())
      expect(() => log!.list({ limit: 5 })).toThrow(AuditReadError)
      expect(() => log!.eventsSince('policy_evaluated', 0)).toThrow(/audit\.db row 1 \(policy_evaluated\): its data is not a JSON object, which no append writes; the log was changed outside countersign/)
    }
    // What a process that meets it at start prints: the words, no stack trace.
    const err = (() => {
      try {
        log!.list({ limit: 5 })
      } catch (e) {
        return e as Error
      }
    })()
    expect(describeFailure(err)).toBe(err!.message)
  })

  it.each<[string, Parameters<typeof insertRawAuditRow>[1], RegExp]>([
    ['data that is not JSON', { data: 'not json' }, /its data is not a JSON object/],
    ['data that is a JSON array', { data: '[1]' }, /its data is not a JSON object/],
    ['data that is a blob', { data: Buffer.from('{}') }, /its data is not a JSON object/],
    // A TEXT column turns a number into text (SQLite's type affinity) and refuses NULL: a blob stays a blob.
    ['an id that is a blob', { id: Buffer.from('id'), data: '{"intentId":"x"}' }, /its id, intent_id, event or timestamp is not of the type/],
    ['an intent id that is a blob', { intentId: Buffer.from('x'), data: '{}' }, /its id, intent_id, event or timestamp is not of the type/],
    ['a timestamp that is text', { timestamp: 'yesterday', data: '{}' }, /its id, intent_id, event or timestamp is not of the type/],
    ['a timestamp past what a Date holds', { timestamp: 9_000_000_000_000_000, data: '{}' }, /its id, intent_id, event or timestamp is not of the type/],
    ['an event name that is a blob', { event: Buffer.from('x'), data: '{}' }, /its id, intent_id, event or timestamp is not of the type/],
  ])('a row inserted by hand with %s: list throws it by default, shows it marked with malformed: show', async (_what, row, problem) => {
    const { file } = fresh()
    log = openAuditLog(file)
    await log.append({ intentId: 'a', event: 'policy_evaluated', data: { wallet: '0x01' } })
    const seq = insertRawAuditRow(file, row)
    await log.append({ intentId: 'b', event: 'tx_built', data: { description: 'x' } })
    expect(() => log!.list({ limit: 5 })).toThrow(problem)
    const shown = log.list({ limit: 5, malformed: 'show' })
    expect(shown.map((e) => e.event)).toEqual(['tx_built', typeof row.event === 'undefined' ? 'inserted' : 'malformed_row', 'policy_evaluated'])
    const odd = shown[1]!
    expect(typeof odd.id).toBe('string')
    expect(Number.isSafeInteger(odd.timestamp)).toBe(true)
    expect(typeof odd.intentId).toBe('string')
    expect(odd.data).toEqual({ intentId: odd.intentId, malformedRow: expect.stringMatching(problem) })
    expect(odd.data.malformedRow).toContain(`audit.db row ${seq}`)
    expect(odd.data.malformedRow).toContain('countersign-audit verify')
    // The rows around it read as they were written.
    expect(shown[0]!.data).toEqual({ description: 'x', intentId: 'b' })
    // And `countersign-audit tail` prints it the same way instead of stopping.
    const out: string[] = []
    expect(runAuditCli(['tail', '--db', file, '-n', '5'], { out: (t) => out.push(t), err: (t) => out.push(t), env: {} })).toBe(0)
    expect(out.map((l) => JSON.parse(l).event)).toEqual(['policy_evaluated', odd.event, 'tx_built'])
  })

  it('is durable: a reopened log has every acknowledged event', async () => {
    const { file } = fresh()
    log = openAuditLog(file)
    await Promise.all(Array.from({ length: 50 }, (_, n) => log!.append({ intentId: `i-${n}`, event: 'e', data: { n } })))
    await log.close()
    log = openAuditLog(file)
    expect(log.list({ limit: 100 })).toHaveLength(50)
  })

  it('refuses data that is not plain JSON without affecting other events in the batch', async () => {
    const { file } = fresh()
    log = openAuditLog(file)
    const good = log.append({ intentId: 'a', event: 'ok', data: {} })
    const bad = log.append({ intentId: 'b', event: 'bad', data: { n: 10n } as never })
    await expect(bad).rejects.toThrow(/not plain JSON/)
    await expect(good).resolves.toMatchObject({ event: 'ok' })
    expect(verifyAuditChain(file)).toMatchObject({ ok: true, rows: 1 })
  })

  it('refuses bad events one by one, writing nothing for them', async () => {
    const { file } = fresh()
    log = openAuditLog(file)
    const bad: unknown[] = [
      { intentId: 'a', event: 'e', data: { when: new Date() } },
      { intentId: 'a', event: 'e', data: [1, 2] },
      { intentId: 'a', event: 'e', data: null },
      { intentId: '', event: 'e', data: {} },
      { intentId: 'a', event: '', data: {} },
    ]
    const results = await Promise.allSettled([...bad.map((b) => log!.append(b as never)), log.append({ intentId: 'a', event: 'ok', data: { gone: undefined } })])
    expect(results.slice(0, -1).every((r) => r.status === 'rejected' && r.reason instanceof AuditDataError)).toBe(true)
    expect(results.at(-1)).toMatchObject({ status: 'fulfilled' })
    expect(() => log!.appendSync({ intentId: 'a', event: 'e', data: { key: new Uint8Array(32) } })).toThrow(/data\.key is not plain JSON \(its type is Uint8Array/)
    expect(log.list({ limit: 10 }).map((e) => e.event)).toEqual(['ok'])
    expect(log.list({ limit: 10 })[0]!.data).toEqual({ intentId: 'a' })
    expect(() => log!.list({ limit: -1 })).toThrow(RangeError)
  })

  it('appendAll writes its events in one transaction, in order: all of them or, when one fails inside SQLite or is not plain JSON, none', async () => {
    for (const options of [{}, { fsync: 'grouped' }, { writer: 'worker' }] as const) {
      const { file } = fresh()
      const opened = openAuditLog(file, options)
      log = opened
      const before = opened.commits
      const written = await opened.appendAll([
        { intentId: 'i-1', event: 'approval_granted', data: { tokenId: 't' } },
        { intentId: 'i-1', event: 'web_approval_decided', data: { approved: true } },
      ])
      expect(written.map((e) => e.event)).toEqual(['approval_granted', 'web_approval_decided'])
      if (!('writer' in options)) expect(opened.commits - before).toBe(1)
      // A failure inside the transaction (a full disk, here a trigger) on the second row takes the first with it.
      const db = new Database(file)
      db.exec(`CREATE TRIGGER test_refuse BEFORE INSERT ON audit_events WHEN NEW.event = 'second' BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END`)
      await expect(opened.appendAll([
        { intentId: 'i-2', event: 'first', data: {} },
        { intentId: 'i-2', event: 'second', data: {} },
      ])).rejects.toThrow(/disk is full/)
      db.exec('DROP TRIGGER test_refuse')
      db.close()
      await expect(opened.appendAll([
        { intentId: 'i-3', event: 'first', data: {} },
        { intentId: 'i-3', event: 'second', data: { when: new Date(0) } },
      ])).rejects.toThrow(AuditDataError)
      expect(opened.list({ limit: 10 }).map((e) => e.event).reverse()).toEqual(['approval_granted', 'web_approval_decided'])
      await opened.close()
      log = undefined
    }
  })

  it('appendSync commits before it returns and continues the same chain', async () => {
    const { file } = fresh()
    log = openAuditLog(file)
    await log.append({ intentId: 'a', event: 'first', data: {} })
    const e = log.appendSync({ intentId: 'system', event: 'shutdown', data: { reason: 'SIGTERM' } })
    expect(e).toMatchObject({ intentId: 'system', event: 'shutdown', data: { intentId: 'system', reason: 'SIGTERM' } })
    // Visible to another connection at once: it is committed.
    const other = new Database(file, { readonly: true })
    expect(other.prepare('SELECT count(*) AS n FROM audit_events').get()).toEqual({ n: 2 })
    other.close()
    await log.append({ intentId: 'a', event: 'after', data: {} })
    expect(log.list({ limit: 3 }).map((x) => x.event)).toEqual(['after', 'shutdown', 'first'])
    expect(verifyAuditChain(file)).toMatchObject({ ok: true, rows: 3 })
    await log.close()
    expect(() => log!.appendSync({ intentId: 'a', event: 'late', data: {} })).toThrow(/closed/)
  })

  it.each(['inline', 'worker'] as const)('SQLITE_BUSY beyond the timeout rejects the whole waiting batch clearly, then writing resumes (%s)', async (writer) => {
    const { file } = fresh()
    log = openAuditLog(file, { writer, busyTimeoutMs: 150 })
    await log.append({ intentId: 'a', event: 'before', data: {} })
    const other = new Database(file)
    other.prepare('BEGIN IMMEDIATE').run()
    const waiting = Array.from({ length: 5 }, (_, n) => log!.append({ intentId: 'a', event: 'locked-out', data: { n } }))
    const settled = await Promise.allSettled(waiting)
    for (const r of settled) {
      expect(r.status).toBe('rejected')
      expect(String((r as PromiseRejectedResult).reason)).toMatch(/5 events not recorded\): audit\.db stayed locked by another writer for more than 150 ms/)
      expect((r as PromiseRejectedResult).reason).toMatchObject({ name: 'AuditWriteError', code: expect.stringMatching(/^SQLITE_BUSY/) })
    }
    if (writer === 'inline') expect(() => log!.appendSync({ intentId: 'a', event: 'sync', data: {} })).toThrow(/locked by another writer/)
    other.prepare('COMMIT').run()
    other.close()
    await log.append({ intentId: 'a', event: 'after', data: {} })
    expect(log.list({ limit: 10 }).map((e) => e.event)).toEqual(['after', 'before'])
    expect(verifyAuditChain(file)).toMatchObject({ ok: true, rows: 2 })
  })

  it('the worker-thread writer: same chain, same durability, group commit off the event loop', async () => {
    const { file } = fresh()
    log = openAuditLog(file, { writer: 'worker' })
    const appended = await Promise.all(Array.from({ length: 300 }, (_, n) => log!.append({ intentId: `w-${n}`, event: 'e', data: { n } })))
    expect(log.commits).toBeLessThan(30)
    expect(log.list({ limit: 1 })[0]).toEqual(appended[299])
    await log.close()
    log = undefined
    expect(verifyAuditChain(file)).toMatchObject({ ok: true, rows: 300 })
    // A reopened log (inline) continues the same chain.
    log = openAuditLog(file)
    await log.append({ intentId: 'after', event: 'e', data: {} })
    expect(verifyAuditChain(file)).toMatchObject({ ok: true, rows: 301 })
  })

  it.each([['worker', { writer: 'worker' }], ['inline', {}], ['grouped', { fsync: 'grouped' }]] as const)(
    'appendOrdered (%s writer): once `ordered` settles the row is committed and any later writer chains after it; `durable` gives the event',
    async (kind, opts) => {
      const { file } = fresh()
      log = openAuditLog(file, opts)
      await log.append({ intentId: 'first', event: 'e', data: {} })
      const settled: string[] = []
      const { ordered, durable } = log.appendOrdered({ intentId: 'handed-on', event: 'approve_request_created', data: { n: 1 } })
      void durable.then(() => settled.push('durable'))
      await ordered
      settled.push('ordered')
      // Another process's connection sees it, and its own append goes after it in the chain.
      const other = new Database(file, { readonly: true })
      expect(other.prepare("SELECT seq FROM audit_events WHERE intent_id = 'handed-on'").get()).toEqual({ seq: 2 })
      other.close()
      const second = openAuditLog(file)
      await second.append({ intentId: 'approver', event: 'approval_requested', data: {} })
      await second.close()
      const event = await durable
      expect(event).toMatchObject({ intentId: 'handed-on', event: 'approve_request_created', data: { n: 1 } })
      // The worker says "committed" before its fsync; the in-commit writers can only say it with the fsync.
      if (kind === 'worker') expect(settled).toEqual(['ordered', 'durable'])
      expect(log.list({ limit: 3 }).map((e) => e.intentId)).toEqual(['approver', 'handed-on', 'first'])
      await log.close()
      log = undefined
      expect(verifyAuditChain(file)).toMatchObject({ ok: true, rows: 3 })
    },
  )

  it('appendOrdered: a refused event or a failed commit rejects both promises', async () => {
    const { file } = fresh()
    log = openAuditLog(file, { writer: 'worker', busyTimeoutMs: 50 })
    const refused = log.appendOrdered({ intentId: 'x', event: 'e', data: { n: 1n } as never })
    await expect(refused.ordered).rejects.toBeInstanceOf(AuditDataError)
    await expect(refused.durable).rejects.toBeInstanceOf(AuditDataError)
    // Another connection holds the write lock past the busy timeout: the commit fails.
    const holder = new Database(file)
    holder.prepare('BEGIN IMMEDIATE').run()
    const blocked = log.appendOrdered({ intentId: 'x', event: 'e', data: {} })
    await expect(blocked.ordered).rejects.toThrow(/audit log write failed \(1 events not recorded\)/)
    await expect(blocked.durable).rejects.toThrow(/SQLITE_BUSY|locked/)
    holder.prepare('ROLLBACK').run()
    holder.close()
    await log.appendOrdered({ intentId: 'x', event: 'after', data: {} }).durable
    expect(log.list({ limit: 5 }).map((e) => e.event)).toEqual(['after'])
  })

  it.each(['worker', 'inline'] as const)('appendOrdered (%s writer): a failed commit whose `ordered` nobody awaits is no unhandled rejection', async (writer) => {
    const { file } = fresh()
    log = openAuditLog(file, { writer, busyTimeoutMs: 50 })
    const unhandled: unknown[] = []
    const onUnhandled = (reason: unknown) => unhandled.push(reason)
    process.on('unhandledRejection', onUnhandled)
    const holder = new Database(file)
    try {
      holder.prepare('BEGIN IMMEDIATE').run()
      // What approve-request does for an allowed intent: it answers after `durable`, never looking at `ordered`.
      const { durable } = log.appendOrdered({ intentId: 'x', event: 'approve_request_created', data: {} })
      await expect(durable).rejects.toThrow(/SQLITE_BUSY|locked/)
      for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r))
      expect(unhandled).toEqual([])
    } finally {
      process.off('unhandledRejection', onUnhandled)
      holder.prepare('ROLLBACK').run()
      holder.close()
    }
  })

  it('listAfter: the rows after a seq, oldest first, with their seq, at most limit; a hand-inserted row shown marked', async () => {
    const { file } = fresh()
    log = openAuditLog(file)
    for (let n = 1; n <= 5; n++) await log.append({ intentId: `i-${n}`, event: 'e', data: { n } })
    expect(log.listAfter(2, 2).map((r) => [r.seq, r.event.data.n])).toEqual([[3, 3], [4, 4]])
    expect(log.listAfter(5, 10)).toEqual([])
    const seq = insertRawAuditRow(file, { data: 'null' })
    expect(log.listAfter(5, 10)).toEqual([{ seq, event: expect.objectContaining({ data: expect.objectContaining({ malformedRow: expect.stringContaining(`row ${seq}`) }) }) }])
    expect(() => log!.listAfter(0, -1)).toThrow(RangeError)
  })

  it('a hand-inserted row nested deeper than an append accepts reads as malformed (history and the feed show it marked), not as a stack overflow', async () => {
    const { file } = fresh()
    log = openAuditLog(file)
    let deepest: unknown = {}
    for (let i = 1; i < 64; i++) deepest = { d: deepest }
    await log.append({ intentId: 'i-64', event: 'e', data: deepest as Record<string, unknown> })
    await expect(log.append({ intentId: 'i-65', event: 'e', data: { d: deepest } })).rejects.toThrow(/nested more than 64 levels deep/)
    const seq = insertRawAuditRow(file, { data: `{"intentId":"i-deep","a":${'['.repeat(20_000)}${']'.repeat(20_000)}}` })
    const [shown, appended] = log.list({ limit: 2, malformed: 'show' })
    expect(shown!.data.malformedRow).toMatch(new RegExp(`row ${seq} .*nested more than 64 levels deep`))
    expect(() => JSON.stringify(shown)).not.toThrow()
    expect(appended!.intentId).toBe('i-64')
    expect(() => log!.list({ limit: 1 })).toThrow(/nested more than 64 levels deep/)
  })

  it.each(['inline', 'worker'] as const)('(%s writer) audit_events swapped for an endless view while the log is open: reads and appends refuse in words instead of never returning (found by review)', async (writer) => {
    const { file } = fresh()
    log = openAuditLog(file, { writer })
    await log.append({ intentId: 'a', event: 'e', data: {} })
    expect(log.head().seq).toBe(1)
    // What anyone who can write audit.db can do to a running process: the table renamed, a recursive view in its place.
    const other = new Database(file)
    other.exec(`ALTER TABLE audit_events RENAME TO audit_events_real;
      CREATE VIEW audit_events AS WITH RECURSIVE r(seq) AS (SELECT 1 UNION ALL SELECT seq + 1 FROM r)
      SELECT seq, 'x' AS id, 0 AS timestamp, 'i' AS intent_id, 'e' AS event, '{}' AS data, '' AS prev_hash, '' AS hash FROM r;`)
    other.close()
    expect(() => log!.head()).toThrow(AuditReadError)
    expect(() => log!.head()).toThrow(/audit\.db was changed while countersign had it open: audit_events is a view, not the audit log's table/)
    expect(() => log!.list({ limit: 5 })).toThrow(AuditReadError)
    expect(() => log!.listAfter(0, 5)).toThrow(AuditReadError)
    expect(() => log!.eventsSince('e', 0)).toThrow(AuditReadError)
    await expect(log.append({ intentId: 'b', event: 'e', data: {} })).rejects.toThrow(/audit\.db was changed while countersign had it open: audit_events is a view/)
  })

  it.each(['inline', 'worker'] as const)('(%s writer) a tail row put in by hand at seq 2^53 refuses appends in words, not as a UNIQUE failure', async (writer) => {
    const { file } = fresh()
    log = openAuditLog(file, { writer })
    await log.append({ intentId: 'a', event: 'e', data: {} })
    insertRawAuditRow(file, { seq: 2 ** 53 })
    await expect(log.append({ intentId: 'b', event: 'e', data: {} })).rejects.toThrow(
      /audit log write failed \(1 events not recorded\): audit\.db's newest row \(seq 9007199254740992\) has a seq or hash no append writes, and no event can be chained after it/,
    )
  })

  it('SQLite refuses UPDATE and DELETE', async () => {
    const { file } = fresh()
    log = openAuditLog(file)
    await log.append({ intentId: 'a', event: 'e', data: {} })
    const db = new Database(file)
    expect(() => db.prepare("UPDATE audit_events SET event = 'x'").run()).toThrow(/append-only/)
    expect(() => db.prepare('DELETE FROM audit_events').run()).toThrow(/append-only/)
    db.close()
  })

  it('the worker gathers what arrives while it commits: appends made one per tick share transactions, each answered after its fsync', async () => {
    const { file } = fresh()
    log = openAuditLog(file, { writer: 'worker' })
    const appended: Array<Promise<unknown>> = []
    for (let n = 0; n < 60; n++) {
      appended.push(log.append({ intentId: `t-${n}`, event: 'e', data: { n } }))
      await new Promise((r) => setImmediate(r))
    }
    await Promise.all(appended)
    // 60 batches handed over, one a tick; the writer took those that queued up during each commit together.
    expect(log.commits).toBeLessThan(30)
    await log.close()
    log = undefined
    expect(verifyAuditChain(file)).toMatchObject({ ok: true, rows: 60 })
  })

  it('group commit: 500 concurrent appends, one chain, far fewer transactions', async () => {
    const { file } = fresh()
    log = openAuditLog(file)
    await Promise.all(Array.from({ length: 500 }, (_, n) => log!.append({ intentId: 'x', event: 'e', data: { n } })))
    expect(log.commits).toBeLessThan(10)
    expect(verifyAuditChain(file)).toMatchObject({ ok: true, rows: 500 })
  })

  it('several processes appending to one file keep one valid chain', async () => {
    const { dir, file } = fresh()
    const script = path.join(dir, 'writer.mjs')
    writeFileSync(
      script,
      `import { openAuditLog } from ${JSON.stringify(compiledAuditLog)}
       const log = openAuditLog(process.argv[2])
       await Promise.all(Array.from({ length: 200 }, (_, n) => log.append({ intentId: 'p' + process.pid, event: 'e', data: { n } })))
       await log.close()`,
    )
    log = openAuditLog(file)
    const children = [1, 2, 3].map(() => run(process.execPath, [script, file]))
    const mine = Array.from({ length: 200 }, (_, n) => log!.append({ intentId: 'parent', event: 'e', data: { n } }))
    await Promise.all([...children, ...mine])
    expect(verifyAuditChain(file)).toMatchObject({ ok: true, rows: 800 })
    const perWriter = new Map<string, number>()
    for (const e of log.list({ limit: 1000 })) perWriter.set(e.intentId, (perWriter.get(e.intentId) ?? 0) + 1)
    expect([...perWriter.values()]).toEqual([200, 200, 200, 200])
  })
})

describe('verifyAuditChain and the CLI', () => {
  async function filled(n: number) {
    const { dir, file } = fresh()
    const l = openAuditLog(file)
    for (let i = 0; i < n; i++) await l.append({ intentId: `i-${i}`, event: 'e', data: { i } })
    await l.close()
    return { dir, file }
  }

  it('reports an edited row', async () => {
    const { file } = await filled(5)
    tamper(file, `UPDATE audit_events SET data = '{"i":99,"intentId":"i-2"}' WHERE seq = 3`)
    expect(verifyAuditChain(file)).toMatchObject({ ok: false, rows: 5, problemCount: 1, problems: [{ seq: 3, kind: 'broken_row', problem: expect.stringContaining('edited') }] })
  })

  it('reports a deleted row', async () => {
    const { file } = await filled(5)
    tamper(file, 'DELETE FROM audit_events WHERE seq = 2')
    expect(verifyAuditChain(file)).toMatchObject({ ok: false, rows: 4, problems: [{ seq: 3, problem: 'expected row 2 next, found 3 (rows deleted or inserted)' }] })
  })

  it('reports a rewritten row whose hash was recomputed (the link to the next row breaks)', async () => {
    const { file } = await filled(4)
    // Swap the content of rows 2 and 3 (a reorder); hashes no longer link.
    tamper(file, `UPDATE audit_events SET intent_id = CASE seq WHEN 2 THEN 'i-2' WHEN 3 THEN 'i-1' END WHERE seq IN (2, 3)`)
    expect(verifyAuditChain(file)).toMatchObject({ ok: false, problems: [{ seq: 2, kind: 'broken_row' }, { seq: 3, kind: 'broken_row' }] })
  })

  it('reports rows swapped into another order', async () => {
    const { file } = await filled(4)
    tamper(file, 'UPDATE audit_events SET seq = -seq WHERE seq IN (2, 3); UPDATE audit_events SET seq = CASE seq WHEN -2 THEN 3 ELSE 2 END WHERE seq < 0')
    const swapped = verifyAuditChain(file)
    expect(swapped).toMatchObject({ ok: false, rows: 4 })
    // Each swapped row links to the wrong row and hashes another seq; row 4 links to the wrong row.
    expect(!swapped.ok && swapped.problems.map((p) => p.seq)).toEqual([2, 2, 3, 3, 4])
    expect(!swapped.ok && swapped.problems[0]!.problem).toContain('link')
  })

  it('an edited row whose own hash was recomputed is caught at the next row', async () => {
    const { file } = await filled(4)
    const db = new Database(file)
    const row = db.prepare('SELECT * FROM audit_events WHERE seq = 2').get() as { id: string; timestamp: number; intent_id: string; prev_hash: string }
    db.close()
    const { auditRowHash } = await import('./rowHash.js')
    const data = { i: 42, intentId: row.intent_id }
    const hash = auditRowHash({ seq: 2, id: row.id, timestamp: row.timestamp, intentId: row.intent_id, event: 'e', data, prevHash: row.prev_hash })
    tamper(file, `UPDATE audit_events SET data = '${JSON.stringify(data)}', hash = '${hash}' WHERE seq = 2`)
    expect(verifyAuditChain(file)).toMatchObject({ ok: false, problemCount: 1, problems: [{ seq: 3, problem: expect.stringContaining('link') }] })
  })

  it('the CLI prints OK and exits 0, or names the row and exits 1', async () => {
    const { dir, file } = await filled(3)
    const ok = await run(process.execPath, [compiledCli, 'verify', '--data-dir', dir, '--chain-only'])
    expect(ok.stdout.trim()).toBe('audit chain OK: 3 events (hash chain only: checkpoints and truncation not checked)')
    tamper(file, `UPDATE audit_events SET event = 'forged' WHERE seq = 2`)
    const broken = await run(process.execPath, [compiledCli, 'verify', '--db', file, '--chain-only']).catch((e: { code: number; stdout: string }) => e)
    expect((broken as { code: number }).code).toBe(1)
    expect((broken as { stdout: string }).stdout).toMatch(/^audit chain BROKEN at seq 2 \(broken row\): /)
  })

  it('the CLI explains bad usage and a missing log', () => {
    const out: string[] = []
    const io = { out: (s: string) => out.push(s), err: (s: string) => out.push(s), env: {} }
    expect(runAuditCli(['frobnicate'], io)).toBe(2)
    expect(runAuditCli(['verify', '--db', '/nonexistent/audit.db'], io)).toBe(2)
    expect(out.join('\n')).toContain('no audit log at /nonexistent/audit.db')
    expect(runAuditCli(['verify', '--db'], io)).toBe(2)
    expect(runAuditCli(['tail', '-n', 'many'], io)).toBe(2)
  })

  it('the CLI refuses a file that is not an audit log without a stack trace', () => {
    const { file } = fresh()
    new Database(file).close()
    const out: string[] = []
    const err: string[] = []
    const io = { out: (s: string) => out.push(s), err: (s: string) => err.push(s), env: {} }
    // verify: a log whose table is gone is a broken log (whoever can write the file can drop it).
    expect(runAuditCli(['verify', '--db', file, '--chain-only'], io)).toBe(1)
    expect(out).toContain('audit chain BROKEN (schema changed): audit_events is missing: this file holds no audit log (its rows were not read)')
    expect(out.at(-1)).toBe('audit chain BROKEN: 3 problems in 0 events')
    expect(runAuditCli(['tail', '--db', file], io)).toBe(2)
    expect(err).toEqual([`cannot read audit log at ${file}: audit_events is missing: this file holds no audit log (its rows were not read)`])
  })

  it('tail prints the newest events as JSON lines, oldest of them first; the data dir comes from SERVICE_DATA_DIR', async () => {
    const { dir } = await filled(5)
    const out: string[] = []
    const io = { out: (s: string) => out.push(s), err: (s: string) => out.push(s), env: { SERVICE_DATA_DIR: dir } }
    expect(runAuditCli(['tail', '-n', '2'], io)).toBe(0)
    const lines = out.map((l) => JSON.parse(l) as { seq: number; intentId: string; data: unknown })
    expect(lines.map((l) => l.seq)).toEqual([4, 5])
    expect(lines[1]).toMatchObject({ intentId: 'i-4', event: 'e', data: { i: 4, intentId: 'i-4' } })
  })
})

describe('row hash', () => {
  it('the string-built canonical row hashes exactly like JCS of the row object', async () => {
    const { auditRowHash, auditRowHashFromJcs } = await import('./rowHash.js')
    const { canonicalize } = await import('../canonical/jcs.js')
    const row = { seq: 7, id: 'a-b', timestamp: 1795000000123, intentId: 'i"1', event: 'tx_built', prevHash: '0x' + 'ab'.repeat(32) }
    const data = { z: 1, a: ['é', { y: null, b: true }], intentId: 'i"1' }
    expect(auditRowHashFromJcs({ ...row, dataJcs: canonicalize(data) })).toBe(auditRowHash({ ...row, data }))
  })
})

describe('a trigger planted in audit.db that drops chosen events (RAISE(IGNORE))', () => {
  it.each([
    ['the worker writer (the gateway)', { writer: 'worker' as const }],
    ['the grouped fsync (the signer, the approver)', { fsync: 'grouped' as const }],
    ['the in-commit fsync (the CLIs)', {}],
  ])('%s: the append fails in words instead of being reported written', async (_what, opts) => {
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'cs-audit-ignore-')), 'audit.db')
    await openAuditLog(file).close()
    const db = new Database(file)
    db.exec(`CREATE TRIGGER audit_events_keep BEFORE INSERT ON audit_events WHEN NEW.event = 'approval_rejected' BEGIN SELECT RAISE(IGNORE); END;`)
    db.close()
    const log = openAuditLog(file, opts)
    try {
      await log.append({ intentId: 'i-1', event: 'policy_evaluated', data: {} })
      await expect(log.append({ intentId: 'i-2', event: 'approval_rejected', data: {} })).rejects.toThrow(
        /audit\.db did not store the approval_rejected event \(something in the file, such as a trigger added outside countersign, dropped it\)/,
      )
      expect(log.list({ limit: 5 }).map((e) => e.event)).toEqual(['policy_evaluated'])
    } finally {
      await log.close()
    }
  })
})
