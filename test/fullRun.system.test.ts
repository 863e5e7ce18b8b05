// One full run of the zero-config stack and the demo, started with umask 000:
// afterwards every file in the data directory is 0600 and every directory
// 0700 (DESIGN §6 "files"), and its audit log verifies against the signer's
// audit key, while the two attacks of issue #14 on a copy of it (a rewrite
// with every later hash recomputed; the last rows deleted) fail verify.
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { cpSync, lstatSync, readdirSync } from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import Database from 'better-sqlite3'
import { readLatestCheckpoint } from '@countersign/shared'
import { rewriteAuditRow, truncateAudit } from '@countersign/shared/testing/auditTamper'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort, killOnExit, repoRoot, tempDataDir, waitFor } from './support/processes.js'

const execFileP = promisify(execFile)
const auditCli = path.join(repoRoot, 'shared/dist/audit/cli.js')

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
  await waitFor(() => (output.includes('Ctrl-C stops everything') ? true : null), { timeoutMs: 90_000, what: `the stack to start:\n${output}` })
  const demo = runLoose('scripts/demo.mjs')
  const code = await demo.done
  if (code !== 0) throw new Error(`the demo failed (${code}):\n${demo.out()}`)
  launcher.kill('SIGINT')
  await new Promise((r) => launcher.once('exit', r))
}, 240_000)

afterAll(() => {
  if (launcher && launcher.exitCode === null) launcher.kill('SIGKILL')
})

describe('a full run under umask 000', () => {
  it('leaves every file in the data directory 0600 and every directory 0700', () => {
    const entries = walk(dataDir)
    // The run did create what it should: databases (with their WAL files while open), keys, secrets.
    const names = entries.map((e) => e.path)
    for (const expected of ['audit.db', 'gateway.db', 'signer.db', 'audit-key', 'audit-key.pub', 'operator-token', 'dev-passphrase', 'dev-keystore', 'run']) expect(names).toContain(expected)
    expect(entries.filter((e) => e.path.startsWith('dev-keystore/') && e.kind === 'file').length).toBeGreaterThan(0)
    const wrong = entries.filter((e) => !((e.kind === 'dir' && e.mode === '700') || ((e.kind === 'file' || e.kind === 'socket') && e.mode === '600')))
    expect(wrong).toEqual([])
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

  it('the rewrite attack (triggers dropped, approved flipped to false, every later hash recomputed) fails verify naming a bad checkpoint', async () => {
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
    expect(r.out).toMatch(/^audit chain BROKEN at seq \d+ \(bad checkpoint signature\): /)
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
