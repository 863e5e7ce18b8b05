import { execFile } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { openAuditLog, type AuditLog } from './auditLog.js'
import { runAuditCli } from './cli.js'
import { verifyAuditChain } from './verify.js'

const run = promisify(execFile)
const here = path.dirname(fileURLToPath(import.meta.url))
const compiledAuditLog = path.resolve(here, '../../dist/audit/auditLog.js')
const compiledCli = path.resolve(here, '../../dist/audit/cli.js')

let log: AuditLog | undefined
afterEach(async () => {
  await log?.close()
  log = undefined
})

function fresh() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cs-audit-'))
  return { dir, file: path.join(dir, 'audit.db') }
}

function tamper(file: string, sql: string) {
  const db = new Database(file)
  db.exec('DROP TRIGGER audit_events_no_update; DROP TRIGGER audit_events_no_delete;')
  db.exec(sql)
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
    expect(verifyAuditChain(file)).toEqual({ ok: true, rows: 1 })
  })

  it('the worker-thread writer: same chain, same durability, group commit off the event loop', async () => {
    const { file } = fresh()
    log = openAuditLog(file, { writer: 'worker' })
    const appended = await Promise.all(Array.from({ length: 300 }, (_, n) => log!.append({ intentId: `w-${n}`, event: 'e', data: { n } })))
    expect(log.commits).toBeLessThan(30)
    expect(log.list({ limit: 1 })[0]).toEqual(appended[299])
    await log.close()
    log = undefined
    expect(verifyAuditChain(file)).toEqual({ ok: true, rows: 300 })
    // A reopened log (inline) continues the same chain.
    log = openAuditLog(file)
    await log.append({ intentId: 'after', event: 'e', data: {} })
    expect(verifyAuditChain(file)).toEqual({ ok: true, rows: 301 })
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

  it('group commit: 500 concurrent appends, one chain, far fewer transactions', async () => {
    const { file } = fresh()
    log = openAuditLog(file)
    await Promise.all(Array.from({ length: 500 }, (_, n) => log!.append({ intentId: 'x', event: 'e', data: { n } })))
    expect(log.commits).toBeLessThan(10)
    expect(verifyAuditChain(file)).toEqual({ ok: true, rows: 500 })
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
    expect(verifyAuditChain(file)).toEqual({ ok: true, rows: 800 })
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
    expect(verifyAuditChain(file)).toMatchObject({ ok: false, firstBadSeq: 3, rows: 2, problem: expect.stringContaining('edited') })
  })

  it('reports a deleted row', async () => {
    const { file } = await filled(5)
    tamper(file, 'DELETE FROM audit_events WHERE seq = 2')
    expect(verifyAuditChain(file)).toMatchObject({ ok: false, firstBadSeq: 3 })
  })

  it('reports a rewritten row whose hash was recomputed (the link to the next row breaks)', async () => {
    const { file } = await filled(4)
    // Swap the content of rows 2 and 3 (a reorder); hashes no longer link.
    tamper(file, `UPDATE audit_events SET intent_id = CASE seq WHEN 2 THEN 'i-2' WHEN 3 THEN 'i-1' END WHERE seq IN (2, 3)`)
    expect(verifyAuditChain(file)).toMatchObject({ ok: false, firstBadSeq: 2 })
  })

  it('the CLI prints OK and exits 0, or names the row and exits 1', async () => {
    const { dir, file } = await filled(3)
    const ok = await run(process.execPath, [compiledCli, 'verify', '--data-dir', dir])
    expect(ok.stdout.trim()).toBe('audit chain OK: 3 events')
    tamper(file, `UPDATE audit_events SET event = 'forged' WHERE seq = 2`)
    const broken = await run(process.execPath, [compiledCli, 'verify', '--db', file]).catch((e: { code: number; stdout: string }) => e)
    expect((broken as { code: number }).code).toBe(1)
    expect((broken as { stdout: string }).stdout).toMatch(/^audit chain BROKEN at seq 2: /)
  })

  it('the CLI explains bad usage and a missing log', () => {
    const out: string[] = []
    const io = { out: (s: string) => out.push(s), err: (s: string) => out.push(s), env: {} }
    expect(runAuditCli(['frobnicate'], io)).toBe(2)
    expect(runAuditCli(['verify', '--db', '/nonexistent/audit.db'], io)).toBe(2)
    expect(out.join('\n')).toContain('no audit log at /nonexistent/audit.db')
    expect(runAuditCli(['verify', '--db'], io)).toBe(2)
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
