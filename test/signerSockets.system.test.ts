// The signer process's sockets and start-up refusals, as an operator sees
// them in its log: connections dropped at the limit are reported (the signer
// passed no logger to its RPC servers, so they went unrecorded), and an
// audit.db whose audit_events is not countersign's table stops it with one
// line naming the file, not an SQLite stack trace.
import net from 'node:net'
import path from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { spawnService, tempDataDir, type ServiceProcess } from './support/processes.js'
import { entries } from './support/stack.js'

const started: ServiceProcess[] = []
const sockets: net.Socket[] = []

afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy()
  await Promise.all(started.splice(0).map((p) => p.stop()))
})

function startSigner(dataDir: string): ServiceProcess {
  const signer = spawnService('signer-sockets', entries.signer, { SERVICE_DATA_DIR: dataDir })
  started.push(signer)
  return signer
}

/** A connection that sends nothing; resolves once connected, with a promise of its close. */
function idleConnection(socketPath: string): Promise<{ closed: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const socket = net.createConnection(socketPath)
    sockets.push(socket)
    socket.on('error', () => {})
    const closed = new Promise<void>((r) => socket.once('close', () => r()))
    socket.once('connect', () => resolve({ closed }))
    socket.once('error', reject)
  })
}

describe('signer sockets', () => {
  it('a connection beyond the limit of 64 is dropped and the signer logs it as a warning', async () => {
    const dataDir = tempDataDir('signer-sockets')
    const signer = startSigner(dataDir)
    await signer.waitForLine(/countersign signer ready/)
    const socketPath = path.join(dataDir, 'run', 'signer.sock')
    for (let i = 0; i < 64; i++) await idleConnection(socketPath)
    const extra = await idleConnection(socketPath)
    await extra.closed
    const line = await signer.waitForLine(/too many connections/, 5000)
    expect(JSON.parse(line)).toMatchObject({ service: 'signer', level: 'warn', msg: 'RPC connection dropped: too many connections', socketPath, max: 64 })
  })
})

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
