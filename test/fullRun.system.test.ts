// One full run of the zero-config stack and the demo, started with umask 000:
// afterwards every file in the data directory is 0600 and every directory
// 0700 (DESIGN §6 "files"), and its audit log verifies against the signer's
// audit key, while the two attacks of issue #14 on a copy of it (a rewrite
// with every later hash recomputed; the last rows deleted) fail verify.
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { cpSync, lstatSync, readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import Database from 'better-sqlite3'
import { readLatestCheckpoint } from '@countersign/shared/server'
import { rewriteAuditRow, truncateAudit } from '@countersign/shared/testing/auditTamper'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort, killOnExit, repoRoot, StopWaiting, tempDataDir, waitFor } from './support/processes.js'

const execFileP = promisify(execFile)
const auditCli = path.join(repoRoot, 'shared/dist/server/audit/cli.js')

/** countersign-audit verify: exit code and what it printed. */
async function verify(...args: string[]): Promise<{ code: number; out: string }> {
  try {
    const { stdout } = await execFileP(process.execPath, [auditCli, 'verify', ...args])
    return { code: 0, out: stdout.trim() }
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string }
    return { code: e.code, out: (e.stdout + e.stderr).trim() }
  }
}

/** A copy of the stopped run's data directory to attack (sockets are gone by then; skipped if not). */
function copyOfRun(label: string): string {
  const copy = tempDataDir(label)
  cpSync(dataDir, copy, { recursive: true, filter: (src) => !lstatSync(src).isSocket() })
  return copy
}

let dataDir: string
let env: Record<string, string>
let launcher: ChildProcess
let output = ''

/** Runs a repository script under `umask 000`, the loosest a user can have. */
function runLoose(script: string) {
  const child = spawn('/bin/sh', ['-c', `umask 000 && exec "${process.execPath}" "${path.join(repoRoot, script)}"`], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    cwd: repoRoot,
  })
  killOnExit(child)
  let out = ''
  child.stdout.on('data', (d) => (out += d))
  child.stderr.on('data', (d) => (out += d))
  const done = new Promise<number | null>((r) => child.once('exit', (code) => r(code)))
  return { child, done, out: () => out }
}

/** Every entry under `root` (not following symlinks) with its type and permission bits. */
function walk(root: string): Array<{ path: string; kind: 'dir' | 'file' | 'socket' | 'symlink' | 'other'; mode: string }> {
  const found: Array<{ path: string; kind: 'dir' | 'file' | 'socket' | 'symlink' | 'other'; mode: string }> = []
  const visit = (p: string) => {
    const st = lstatSync(p)
    const kind = st.isDirectory() ? 'dir' : st.isFile() ? 'file' : st.isSocket() ? 'socket' : st.isSymbolicLink() ? 'symlink' : 'other'
    found.push({ path: path.relative(root, p) || '.', kind, mode: (st.mode & 0o7777).toString(8) })
    if (kind === 'dir') for (const name of readdirSync(p)) visit(path.join(p, name))
  }
  visit(root)
  return found
}

beforeAll(async () => {
  dataDir = tempDataDir('fullrun')
  env = {
    SERVICE_DATA_DIR: dataDir,
    SERVICE_PORT: String(await freePort()),
    SERVICE_APPROVER_PORT: String(await freePort()),
    SERVICE_DEV_CHAIN_PORT: String(await freePort()),
  }
  const started = runLoose('scripts/start.mjs')
  launcher = started.child
  launcher.stdout!.on('data', (d) => (output += d))
  launcher.stderr!.on('data', (d) => (output += d))
  // The launcher's output is only known when the wait ends: it goes into the error then (a launcher that exits ends the wait at once).
  let exited: number | null | undefined
  launcher.once('exit', (code) => (exited = code))
  try {
    await waitFor(
      () => {
        if (exited !== undefined) throw new StopWaiting(`scripts/start.mjs exited (${exited}) before the stack was up`)
        return output.includes('Ctrl-C stops everything') ? true : null
      },
      { timeoutMs: 90_000, what: 'the stack to start' },
    )
  } catch (e) {
    throw new Error(`${(e as Error).message}\n--- scripts/start.mjs said ---\n${output}`)
  }
  const demo = runLoose('scripts/demo.mjs')
  const code = await demo.done
  if (code !== 0) throw new Error(`the demo failed (${code}):\n${demo.out()}`)
}, 240_000)

/** Checkpoint rows so far: the row each seals, and when it was written. */
function checkpoints(): Array<{ sealed: number; timestamp: number }> {
  const db = new Database(path.join(dataDir, 'audit.db'), { readonly: true })
  try {
    return db
      .prepare<[], { data: string; timestamp: number }>("SELECT data, timestamp FROM audit_events WHERE event = 'checkpoint' ORDER BY seq")
      .all()
      .map((r) => ({ sealed: (JSON.parse(r.data) as { seq: number }).seq, timestamp: r.timestamp }))
  } finally {
    db.close()
  }
}

function headSeq(): number {
  const db = new Database(path.join(dataDir, 'audit.db'), { readonly: true })
  try {
    return (db.prepare('SELECT MAX(seq) AS n FROM audit_events').get() as { n: number }).n
  } finally {
    db.close()
  }
}

const wrongModes = (entries: ReturnType<typeof walk>) =>
  entries.filter((e) => !((e.kind === 'dir' && e.mode === '700') || ((e.kind === 'file' || e.kind === 'socket') && e.mode === '600')))

afterAll(() => {
  if (launcher && launcher.exitCode === null) launcher.kill('SIGKILL')
})

describe('a full run under umask 000', () => {
  it('while it runs: every file (databases with their -wal and -shm, keys, secrets, sockets) 0600, every directory 0700', () => {
    const entries = walk(dataDir)
    const names = entries.map((e) => e.path)
    for (const expected of ['audit.db-wal', 'audit.db-shm', 'signer.db-wal', 'gateway.db-wal', 'run/signer.sock', 'run/grant.sock']) expect(names).toContain(expected)
    expect(wrongModes(entries)).toEqual([])
  })

  it('the signer seals what the other processes append: a checkpoint within a poll of 100 new events, and within 10 s of the last', async () => {
    const dev = JSON.parse(readFileSync(path.join(dataDir, 'dev-chain.json'), 'utf8')) as { wallet: string; chainId: number }
    const build = async () => {
      const now = Math.floor(Date.now() / 1000)
      const r = await fetch(`http://127.0.0.1:${env.SERVICE_PORT}/v1/tx/build`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          version: '1', id: randomUUID(), timestamp: now, chain: { type: 'evm', chainId: dev.chainId }, wallet: { address: dev.wallet },
          action: { type: 'transfer_native', to: '0x000000000000000000000000000000000000bEEF', amount: '1' },
          constraints: { maxGasWei: '1000000000000000', deadline: now + 600, maxSlippageBps: 0 },
        }),
      })
      expect(r.status).toBeLessThan(500)
    }
    // Let the signer seal the demo's tail first, then start from a quiet log.
    await waitFor(() => checkpoints().at(-1)!.sealed === headSeq() - 1 || null, { timeoutMs: 15_000, what: 'the demo sealed' })
    const start = headSeq()
    // Builds append their events through the gateway; the signer writes none of them.
    while (headSeq() < start + 100) await build()
    const burstEnd = Date.now()
    const hundredth = start + 100
    // The 100-event rule: sealed well before the 10 s rule would have done it.
    await waitFor(() => checkpoints().some((c) => c.sealed >= hundredth) || null, { timeoutMs: 5_000, intervalMs: 100, what: `a checkpoint sealing seq ${hundredth}` })
    expect(Date.now() - burstEnd).toBeLessThan(5_000)
    // The 10 s rule: a few events more, far fewer than 100, are sealed within 10 s (plus one poll).
    await waitFor(() => checkpoints().at(-1)!.sealed === headSeq() - 1 || null, { timeoutMs: 15_000, what: 'the burst sealed' })
    const sealedBefore = checkpoints().length
    await build()
    const appended = Date.now()
    const target = headSeq()
    await waitFor(() => checkpoints().some((c) => c.sealed >= target) || null, { timeoutMs: 12_000, intervalMs: 100, what: `a checkpoint sealing seq ${target}` })
    expect(checkpoints().length).toBe(sealedBefore + 1)
    expect(Date.now() - appended).toBeLessThan(11_500)
  }, 60_000)

  it('after a clean stop: every file in the data directory 0600 and every directory 0700', async () => {
    launcher.kill('SIGINT')
    await new Promise((r) => launcher.once('exit', r))
    const entries = walk(dataDir)
    // The run did create what it should: databases (with their WAL files while open), keys, secrets.
    const names = entries.map((e) => e.path)
    for (const expected of ['audit.db', 'gateway.db', 'signer.db', 'audit-key', 'audit-key.pub', 'operator-token', 'dev-passphrase', 'dev-keystore', 'run']) expect(names).toContain(expected)
    expect(entries.filter((e) => e.path.startsWith('dev-keystore/') && e.kind === 'file').length).toBeGreaterThan(0)
    expect(wrongModes(entries)).toEqual([])
  })
})

describe('the audit log of that run', () => {
  it('verifies: every checkpoint signed by the signer’s audit key, the log reaches its latest checkpoint', async () => {
    const r = await verify('--data-dir', dataDir)
    expect(r, r.out).toMatchObject({ code: 0 })
    const m = /^audit chain OK: (\d+) events, (\d+) signed checkpoints \(the last at seq (\d+)/.exec(r.out)
    expect(m, r.out).not.toBeNull()
    const db = new Database(path.join(dataDir, 'audit.db'), { readonly: true })
    const signatures = (db.prepare("SELECT COUNT(*) AS n FROM audit_events WHERE event = 'signature_created'").get() as { n: number }).n
    db.close()
    // The demo signs three transactions; each is sealed, plus the start and timer checkpoints.
    expect(signatures).toBeGreaterThanOrEqual(3)
    expect(Number(m![2])).toBeGreaterThan(signatures)
  })

  it('the rewrite attack (triggers dropped, approved flipped to false, every later hash recomputed) fails verify naming sealed rows changed', async () => {
    const dir = copyOfRun('rewrite')
    const file = path.join(dir, 'audit.db')
    const db = new Database(file, { readonly: true })
    const approved = db.prepare<[], { seq: number }>(`SELECT seq FROM audit_events WHERE json_extract(data, '$.approved') = 1 ORDER BY seq LIMIT 1`).get()
    db.close()
    expect(approved, 'the demo records an approval').toBeDefined()
    rewriteAuditRow(file, approved!.seq, (d) => ({ ...d, approved: false }))
    // What the issue found: the hash chain alone says OK.
    expect((await verify('--data-dir', dir, '--chain-only')).code).toBe(0)
    const r = await verify('--data-dir', dir)
    expect(r.code).toBe(1)
    expect(r.out).toMatch(/^audit chain BROKEN at seq \d+ \(sealed rows changed\): /)
  })

  it('the truncation (the last rows deleted, back past the latest checkpoint) fails verify naming a short log', async () => {
    const dir = copyOfRun('truncate')
    const file = path.join(dir, 'audit.db')
    const latest = readLatestCheckpoint(path.join(dir, 'signer.db'))!
    const db = new Database(file, { readonly: true })
    const rows = (db.prepare('SELECT MAX(seq) AS n FROM audit_events').get() as { n: number }).n
    db.close()
    truncateAudit(file, rows - latest.seq + 1)
    expect((await verify('--data-dir', dir, '--chain-only')).code).toBe(0)
    const r = await verify('--data-dir', dir)
    expect(r.code).toBe(1)
    expect(r.out).toContain(`(log shorter than the last checkpoint): the log ends at seq ${latest.seq - 1}, before the signer's latest checkpoint at seq ${latest.seq}`)
  })
})
