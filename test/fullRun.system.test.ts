// One full run of the zero-config stack and the demo, started with umask 000:
// afterwards every file in the data directory is 0600 and every directory
// 0700 (DESIGN §6 "files").
import { spawn, type ChildProcess } from 'node:child_process'
import { lstatSync, readdirSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort, killOnExit, repoRoot, tempDataDir, waitFor } from './support/processes.js'

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
    for (const expected of ['audit.db', 'gateway.db', 'signer.db', 'operator-token', 'dev-passphrase', 'dev-keystore', 'run']) expect(names).toContain(expected)
    expect(entries.filter((e) => e.path.startsWith('dev-keystore/') && e.kind === 'file').length).toBeGreaterThan(0)
    const wrong = entries.filter((e) => !((e.kind === 'dir' && e.mode === '700') || ((e.kind === 'file' || e.kind === 'socket') && e.mode === '600')))
    expect(wrong).toEqual([])
  })
})
