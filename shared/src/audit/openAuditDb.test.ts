import { execFileSync } from 'node:child_process'
import { existsSync, lstatSync, mkdirSync, mkdtempSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import Database from 'better-sqlite3'
import { describeFailure, OperatorError } from '../operatorError.js'
import { openAuditLog } from './auditLog.js'
import { openAuditDb } from './writer.js'

describe('openAuditDb on what is not a database', () => {
  it.each([
    ['a directory', (f: string) => mkdirSync(f), /is not a regular file \(a SQLite database is expected there\)/],
    ['a FIFO (refused at once, not waited on)', (f: string) => execFileSync('mkfifo', ['-m', '600', f]), /is not a regular file/],
    ['a file of other bytes', (f: string) => writeFileSync(f, 'x'.repeat(4096)), /is not a SQLite database, or is damaged .*restore it from a backup/],
  ])('%s: an OperatorError naming the file', (_what, make, message) => {
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'cs-notadb-')), 'audit.db')
    make(file)
    let err: unknown
    try {
      openAuditDb(file)
    } catch (e) {
      err = e
    }
    expect(err).toBeInstanceOf(OperatorError)
    expect((err as Error).message).toContain(file)
    expect((err as Error).message).toMatch(message)
  })
})

describe('countersign-audit on what is not a database or a key', () => {
  it('a FIFO or a directory given as --db, --signer-db or --audit-key is refused in words, at once', async () => {
    const { runAuditCli } = await import('../server/audit/cli.js')
    const dir = mkdtempSync(path.join(os.tmpdir(), 'cs-audit-cli-odd-'))
    const fifo = path.join(dir, 'fifo')
    execFileSync('mkfifo', ['-m', '600', fifo])
    const real = path.join(dir, 'audit.db')
    openAuditDb(real).close()
    const run = (argv: string[]) => {
      const lines: string[] = []
      const code = runAuditCli(argv, { out: (t) => lines.push(t), err: (t) => lines.push(t), env: {} })
      return { code, text: lines.join('\n') }
    }
    for (const argv of [['verify', '--db', fifo, '--chain-only'], ['tail', '--db', fifo], ['verify', '--db', real, '--audit-key', fifo, '--signer-db', real], ['verify', '--db', real, '--audit-key', dir, '--signer-db', real]]) {
      const { code, text } = run(argv)
      expect(code).not.toBe(0)
      expect(text).toMatch(/is not a regular file/)
      expect(text).not.toMatch(/\n\s+at /)
    }
  })
})

describe('audit.db reached through a symbolic link (one link per process, DESIGN layout in operations.md)', () => {
  it.each([
    ['the worker writer (the gateway)', { writer: 'worker' as const }],
    ['the grouped fsync (the signer, the approver)', { fsync: 'grouped' as const }],
    ['the in-commit fsync (the CLIs)', {}],
  ])('%s appends, and the -wal file it syncs is the one beside the real file', async (_what, opts) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'cs-audit-link-'))
    mkdirSync(path.join(dir, 'shared'))
    mkdirSync(path.join(dir, 'proc'))
    const real = path.join(dir, 'shared', 'audit.db')
    openAuditDb(real).close()
    const link = path.join(dir, 'proc', 'audit.db')
    symlinkSync(real, link)
    const log = openAuditLog(link, opts)
    try {
      await log.append({ intentId: 'i-1', event: 'linked_event', data: { n: 1 } })
      expect(log.list({ limit: 5 }).map((e) => e.event)).toEqual(['linked_event'])
    } finally {
      await log.close()
    }
    expect(existsSync(`${link}-wal`)).toBe(false)
  })

  it('a link whose target does not exist yet: the target is created 0600 whatever the umask', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'cs-audit-dangling-'))
    mkdirSync(path.join(dir, 'shared'))
    const real = path.join(dir, 'shared', 'audit.db')
    const link = path.join(dir, 'audit.db')
    symlinkSync('shared/audit.db', link)
    const before = process.umask(0o022)
    try {
      const log = openAuditLog(link, { fsync: 'grouped' })
      await log.append({ intentId: 'i-1', event: 'first', data: {} })
      await log.close()
    } finally {
      process.umask(before)
    }
    expect(statSync(real).mode & 0o777).toBe(0o600)
    expect(lstatSync(link).isSymbolicLink()).toBe(true)
  })
})

describe('audit.db whose audit_events is not countersign table', () => {
  it.each([
    ['a table of other columns', 'CREATE TABLE audit_events (x)', /table audit_events is not as countersign creates it/],
    ['a view', "CREATE VIEW audit_events AS SELECT 1 AS seq, 'h' AS hash", /audit_events is a view, not the audit log's table/],
  ])('%s: openAuditDb and openAuditLog refuse it in one sentence naming the file, and write nothing', (_what, sql, problem) => {
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'cs-audit-table-')), 'audit.db')
    const db = new Database(file)
    db.exec(sql)
    db.close()
    for (const open of [() => openAuditDb(file).close(), () => void openAuditLog(file, { fsync: 'grouped' }), () => void openAuditLog(file, { writer: 'worker' })]) {
      let err: unknown
      try {
        open()
      } catch (e) {
        err = e
      }
      expect(err).toBeInstanceOf(OperatorError)
      const shown = describeFailure(err)
      expect(shown).toContain(`${file} is not a countersign audit log as it stands: `)
      expect(shown).toMatch(problem)
      expect(shown).not.toContain('\n')
    }
    // Nothing was added to the file (no triggers on the foreign object).
    const after = new Database(file, { readonly: true })
    expect(after.prepare('SELECT count(*) AS n FROM sqlite_master').get()).toEqual({ n: 1 })
    after.close()
  })

  it('a file without audit_events gets the table', async () => {
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'cs-audit-table-')), 'audit.db')
    const db = new Database(file)
    db.exec('CREATE TABLE unrelated (x)')
    db.close()
    const log = openAuditLog(file)
    await log.append({ intentId: 'i-1', event: 'first', data: {} })
    await log.close()
  })
})
