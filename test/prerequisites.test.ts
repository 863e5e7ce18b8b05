// `npm test` on a fresh machine: scripts/test-prerequisites.sh either installs
// the Debian packages the system tests need (root, or password-less sudo, and
// apt-get) saying which, or stops at once with the exact apt-get command.
// Run against a PATH of stand-ins, so every branch runs whatever this machine is.
import { execFile } from 'node:child_process'
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { repoRoot } from './support/processes.js'

const exec = promisify(execFile)
const script = path.join(repoRoot, 'scripts/test-prerequisites.sh')
const COMMANDS = ['chromium', 'bwrap', 'tmux', 'systemd-analyze', 'softhsm2-util']

/** A bin directory holding `present` as no-op commands, `id -u` answering `uid`, and optionally apt-get / sudo that log their arguments. */
function fakeBin(o: { present: string[]; uid: number; aptGet?: boolean; sudo?: boolean }): { dir: string; log: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cs-prereq-'))
  const log = path.join(dir, 'calls.log')
  const put = (name: string, body: string) => {
    writeFileSync(path.join(dir, name), `#!/bin/sh\n${body}\n`)
    chmodSync(path.join(dir, name), 0o755)
  }
  for (const c of o.present) put(c, 'exit 0')
  put('id', `echo ${o.uid}`)
  if (o.aptGet) put('apt-get', `echo "apt-get $*" >> ${log}`)
  if (o.sudo) put('sudo', `[ "$1" = -n ] && shift; [ "$1" = true ] && exit 0; echo "sudo $*" >> ${log}; exec "$@"`)
  return { dir, log }
}

async function run(dir: string): Promise<{ code: number; out: string; err: string; ms: number }> {
  const started = performance.now()
  try {
    const { stdout, stderr } = await exec('/bin/bash', [script], { env: { PATH: dir }, timeout: 10_000 })
    return { code: 0, out: stdout, err: stderr, ms: performance.now() - started }
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string }
    return { code: err.code, out: err.stdout, err: err.stderr, ms: performance.now() - started }
  }
}

describe('npm test prerequisites', () => {
  it('everything present: silent, exit 0', async () => {
    const { dir } = fakeBin({ present: COMMANDS, uid: 1000 })
    expect(await run(dir)).toMatchObject({ code: 0, out: '', err: '' })
  })

  it('missing, not root, no sudo: one line with the exact apt-get command, exit 1, within a second', async () => {
    const { dir } = fakeBin({ present: ['tmux', 'systemd-analyze', 'softhsm2-util'], uid: 1000, aptGet: true })
    const r = await run(dir)
    expect(r.code).toBe(1)
    expect(r.out).toBe('')
    expect(r.err).toBe('npm test needs Debian packages that are missing; install them with: sudo apt-get install -y -q --no-install-recommends chromium bubblewrap\n')
    expect(r.ms).toBeLessThan(1000)
  })

  it('missing, as root with apt-get: says what it installs, then installs exactly that', async () => {
    const { dir, log } = fakeBin({ present: ['chromium', 'bwrap', 'tmux'], uid: 0, aptGet: true })
    const r = await run(dir)
    expect(r.code, r.err).toBe(0)
    expect(r.out).toBe('npm test: installing the Debian packages the system tests need: systemd softhsm2\n')
    expect(readFileSync(log, 'utf8')).toBe('apt-get update -q\napt-get install -y -q --no-install-recommends systemd softhsm2\n')
  })

  it('missing, not root but with password-less sudo: installs through sudo -n', async () => {
    const { dir, log } = fakeBin({ present: ['chromium', 'tmux', 'systemd-analyze', 'softhsm2-util'], uid: 1000, aptGet: true, sudo: true })
    const r = await run(dir)
    expect(r.code, r.err).toBe(0)
    expect(r.out).toContain('installing the Debian packages the system tests need: bubblewrap')
    expect(readFileSync(log, 'utf8')).toBe('sudo apt-get update -q\napt-get update -q\nsudo apt-get install -y -q --no-install-recommends bubblewrap\napt-get install -y -q --no-install-recommends bubblewrap\n')
  })

  it('no apt-get at all: the same one line, exit 1', async () => {
    const { dir } = fakeBin({ present: [], uid: 0 })
    const r = await run(dir)
    expect(r.code).toBe(1)
    expect(r.err).toContain('install them with: sudo apt-get install -y -q --no-install-recommends chromium bubblewrap tmux systemd softhsm2')
  })
})
