// The installed commands on a fresh clone: `npm ci` must link every
// countersign-* bin to a file of this repository before anything is built, so
// `npx countersign-keys …` can never fall through to a registry package of the
// same name (a private key piped into it would go to whoever published that).
// The clone is of the committed HEAD, as a new user would get it.
import { execFile } from 'node:child_process'
import { mkdtempSync, realpathSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { repoRoot } from './support/processes.js'

const exec = promisify(execFile)

const COMMANDS = { 'countersign-audit': 'shared', 'countersign-keys': 'services/signer', 'countersign-approve': 'services/approver', 'countersign-skill': 'services/gateway', 'countersign-mcp': 'clients/mcp' }
const SERVICES = { 'countersign-gateway': 'services/gateway', 'countersign-signer': 'services/signer', 'countersign-approver': 'services/approver' }

let clone: string
let tmp: string

/** Runs a command in the clone; never throws, returns the exit code and both outputs. */
async function inClone(file: string, args: string[], timeout = 60_000): Promise<{ code: number; out: string; err: string }> {
  try {
    const { stdout, stderr } = await exec(file, args, { cwd: clone, timeout, env: { ...process.env, npm_config_update_notifier: 'false' } })
    return { code: 0, out: stdout, err: stderr }
  } catch (e) {
    const err = e as { code?: number | string; stdout?: string; stderr?: string }
    return { code: typeof err.code === 'number' ? err.code : -1, out: err.stdout ?? '', err: err.stderr ?? String(e) }
  }
}

beforeAll(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'countersign-clone-'))
  clone = path.join(tmp, 'countersign')
  await exec('git', ['clone', '--quiet', repoRoot, clone])
  // From the npm cache only: the test must not depend on (or reach) a registry.
  // Install scripts are skipped: they build native addons, not bin links.
  const ci = await inClone('npm', ['ci', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'], 300_000)
  expect(ci.code, ci.err).toBe(0)
}, 330_000)

afterAll(() => {
  if (tmp) rmSync(tmp, { recursive: true, force: true })
})

describe('npm ci on a fresh clone links every command locally', () => {
  it('each bin in node_modules/.bin is the committed launcher of this clone', () => {
    for (const [name, workspace] of Object.entries({ ...COMMANDS, ...SERVICES })) {
      expect(realpathSync(path.join(clone, 'node_modules/.bin', name))).toBe(path.join(realpathSync(clone), workspace, 'bin', `${name}.js`))
    }
  })

  it('before a build, npx --no-install runs the local launcher, which says to build first', async () => {
    for (const name of Object.keys({ ...COMMANDS, ...SERVICES })) {
      const r = await inClone('npx', ['--no-install', name, '--help'])
      expect(r.code, `${name}: ${r.out}${r.err}`).toBe(1)
      expect(r.err).toContain(`${name}: `)
      expect(r.err).toContain('run npm run build first')
    }
  }, 120_000)

  it('after npm run build, npx --no-install countersign-* --help prints each command’s usage', async () => {
    const build = await inClone('npm', ['run', 'build'], 300_000)
    expect(build.code, build.out + build.err).toBe(0)
    for (const name of Object.keys(COMMANDS)) {
      const r = await inClone('npx', ['--no-install', name, '--help'])
      expect(r.code, `${name}: ${r.out}${r.err}`).toBe(0)
      expect(r.out).toContain(`usage: ${name}`)
    }
  }, 330_000)
})
