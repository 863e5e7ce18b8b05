// The signer process's start-up refusals, as an operator sees them in its
// log: an audit.db whose audit_events is not countersign's table stops it
// with one line naming the file, not an SQLite stack trace.
import path from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { spawnService, tempDataDir, type ServiceProcess } from './support/processes.js'
import { entries } from './support/stack.js'

const started: ServiceProcess[] = []

afterEach(async () => {
  await Promise.all(started.splice(0).map((p) => p.stop()))
})

function startSigner(dataDir: string): ServiceProcess {
  const signer = spawnService('signer-sockets', entries.signer, { SERVICE_DATA_DIR: dataDir })
  started.push(signer)
  return signer
}

describe('signer start-up with a damaged audit.db', () => {
  it.each([
    ['a table of other columns', 'CREATE TABLE audit_events (x)', 'table audit_events is not as countersign creates it'],
    ['a view', "CREATE VIEW audit_events AS SELECT 1 AS seq, 'h' AS hash", "audit_events is a view, not the audit log's table"],
  ])('%s: one line naming the file and the problem, exit 1, no stack trace', async (_what, sql, problem) => {
    const dataDir = tempDataDir('signer-audit')
    const db = new Database(path.join(dataDir, 'audit.db'))
    db.exec(sql)
    db.close()
    const signer = startSigner(dataDir)
    expect(await signer.exited()).toBe(1)
    const out = signer.output()
    expect(out).toContain(`countersign signer: ${path.join(dataDir, 'audit.db')} is not a countersign audit log as it stands: ${problem}`)
    expect(out).not.toMatch(/\n\s+at /)
    expect(out).not.toContain('SqliteError')
  })
})
