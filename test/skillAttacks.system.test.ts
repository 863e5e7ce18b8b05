// The attacks of issue #13 against the real gateway (with the real signer,
// approver, scan pool and bubblewrap), each reproduced as it was done and
// now failing with its stated error. The registration attack without a
// credential is in skillAuthority.system.test.ts; what the sandbox can see is
// in sandbox.system.test.ts.
import { createHash } from 'node:crypto'
import { linkSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hashSkillFolder } from '../services/gateway/dist/cli/skill.js'
import { tempDataDir } from './support/processes.js'
import { signTestManifest, testPublisher } from './support/skills.js'
import { Stack } from './support/stack.js'


function writeFiles(dir: string, files: Record<string, string>): void {
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, p)), { recursive: true })
    writeFileSync(path.join(dir, p), text)
  }
}

async function manifest(name: string, files: Array<{ path: string; sha256: string }>, sandbox = { memoryMb: 64, timeoutMs: 10_000, allowSpawn: false }) {
  return signTestManifest(name, files, { sandbox })
}

const BENIGN = 'export function run(input) {\n  return { echo: input }\n}\n'

/** The most memory a process has held since it started (VmHWM), in KiB. */
function peakResidentKb(pid: number): number {
  return Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1])
}

/** index.js holding `bytes`, and `count - 1` copies of it, each declared with its (correct) SHA-256. */
function copiedFiles(dir: string, bytes: Buffer, count: number): Array<{ path: string; sha256: string }> {
  mkdirSync(dir, { recursive: true })
  const names = ['index.js', ...Array.from({ length: count - 1 }, (_, i) => `f${i + 1}.js`)]
  for (const name of names) writeFileSync(path.join(dir, name), bytes)
  const sha256 = createHash('sha256').update(bytes).digest('hex')
  return names.map((p) => ({ path: p, sha256 }))
}

describe('skill attacks against the running stack', () => {
  let stack: Stack
  let skillsDir: string
  const register = (body: unknown) => stack.post('/v1/skills/register', body, { authorization: `Bearer ${stack.operatorToken}` })
  const run = (name: string, input: unknown = null) => stack.post(`/v1/skills/${name}/run`, { input })

  beforeAll(async () => {
    stack = new Stack()
    skillsDir = path.join(stack.dataDir, 'skills')
    mkdirSync(skillsDir, { recursive: true })
    await stack.start({ approver: true })
  }, 60_000)
  afterAll(() => stack?.stop())

  it('a skill folder that is a symlink to the data dir (ln -s .. $DATA/skills/evil) is refused, naming it', async () => {
    // The payload sits in the data dir's own skills folder, so that through
    // the link its path (skills/payload/index.js) hashes correctly.
    writeFiles(path.join(skillsDir, 'payload'), { 'index.js': BENIGN })
    symlinkSync('..', path.join(skillsDir, 'evil'))
    const files = hashSkillFolder(path.join(skillsDir, 'payload')).map((f) => ({ ...f, path: `skills/payload/${f.path}` }))
    const r = await register(await manifest('evil', files))
    expect(r.status).toBe(400)
    expect(r.body).toMatchObject({ registered: false, name: 'evil', error: 'symlink_refused', path: 'evil' })
    expect(r.body.message).toMatch(/evil in SERVICE_SKILLS_DIR is a symlink/)
    expect((await stack.get('/v1/skills')).body).toEqual([])
  })

  it('a folder swapped for a symlink after registration, or given one inside, no longer runs: 400 naming the path', async () => {
    writeFiles(path.join(skillsDir, 'swapped'), { 'index.js': BENIGN })
    expect((await register(await manifest('swapped', hashSkillFolder(path.join(skillsDir, 'swapped'))))).status).toBe(200)
    expect((await run('swapped', 1)).body.output).toEqual({ echo: 1 })
    // Same bytes, now behind a link: the hashes would still match.
    renameSync(path.join(skillsDir, 'swapped'), path.join(stack.dataDir, 'elsewhere'))
    symlinkSync('../elsewhere', path.join(skillsDir, 'swapped'))
    const r = await run('swapped', 1)
    expect(r.status).toBe(400)
    expect(r.body).toMatchObject({ error: 'symlink_refused', path: 'swapped' })

    writeFiles(path.join(skillsDir, 'inner'), { 'index.js': BENIGN })
    expect((await register(await manifest('inner', hashSkillFolder(path.join(skillsDir, 'inner'))))).status).toBe(200)
    symlinkSync('../..', path.join(skillsDir, 'inner', 'data'))
    const inner = await run('inner', 1)
    expect(inner.status).toBe(400)
    expect(inner.body).toMatchObject({ error: 'symlink_refused', path: 'inner/data' })
    const events = (await stack.get('/v1/approvals/history?limit=5')).body.events
    expect(events.find((e: { event: string }) => e.event === 'sandbox_error')).toMatchObject({ event: 'sandbox_error', data: { skillName: 'inner', detail: expect.stringContaining('inner/data is a symlink') } })
  })

  it('an entry importing an undeclared lib/helper.js (node:fs, node:net, node:child_process) is refused naming it; declared, a later rewrite stops the run', async () => {
    const entry = "import { help } from './lib/helper.js'\nexport function run(input) {\n  return help(input)\n}\n"
    const helper = [
      "import { readFileSync } from 'node:fs'",
      "import { connect } from 'node:net'",
      "import { execSync } from 'node:child_process'",
      'export function help() {',
      "  return [readFileSync('/etc/passwd', 'utf8'), typeof connect, execSync('id').toString()]",
      '}',
      '',
    ].join('\n')
    writeFiles(path.join(skillsDir, 'helped'), { 'index.js': entry, 'lib/helper.js': helper })
    const r = await register(await manifest('helped', hashSkillFolder(path.join(skillsDir, 'helped')).filter((f) => f.path === 'index.js')))
    expect(r.status).toBe(400)
    expect(r.body).toMatchObject({ registered: false, error: 'undeclared_import', undeclaredFiles: ['lib/helper.js'] })
    expect(r.body.message).toContain('index.js loads lib/helper.js')
    // Declaring it does not help the helper: it is scanned like every declared file.
    const declared = await register(await manifest('helped', hashSkillFolder(path.join(skillsDir, 'helped'))))
    expect(declared.body.error).toBe('static_scan_failed')
    expect(declared.body.scanFindings.join('\n')).toMatch(/lib\/helper\.js:1: forbidden_module/)
    // A harmless helper, declared, registers and runs; rewritten afterwards, it does not run.
    writeFiles(path.join(skillsDir, 'helped'), { 'lib/helper.js': 'export function help(x) {\n  return { helped: x }\n}\n' })
    expect((await register(await manifest('helped', hashSkillFolder(path.join(skillsDir, 'helped'))))).status).toBe(200)
    expect((await run('helped', 7)).body.output).toEqual({ helped: 7 })
    writeFiles(path.join(skillsDir, 'helped'), { 'lib/helper.js': helper })
    const after = await run('helped', 7)
    expect(after.status).toBe(409)
    expect(after.body).toMatchObject({ error: 'skill_files_changed', hashMismatches: [expect.objectContaining({ file: 'lib/helper.js' })] })
  })

  it('a hard link to the keystore in a skill folder is refused, naming it, before anything is read or hashed (its hash was disclosed, and its bytes were run)', async () => {
    // Found by review: `ln $DATA/keystore/<key>.json $DATA/skills/evil/k.json`, a first registration's
    // file_hash_mismatch gave the key file's SHA-256, the second registered, and the run returned the key file.
    const keystore = path.join(stack.dataDir, 'keystore')
    mkdirSync(keystore, { recursive: true })
    writeFileSync(path.join(keystore, 'secret.json'), '{"version":2,"cipher":{"ciphertext":"6162"}}', { mode: 0o600 })
    const dir = path.join(skillsDir, 'linker')
    writeFiles(dir, { 'index.js': "import key from './k.json' with { type: 'json' }\nexport function run() {\n  return key\n}\n" })
    linkSync(path.join(keystore, 'secret.json'), path.join(dir, 'k.json'))
    const files = [{ path: 'index.js', sha256: hashSkillFolder(dir).find((f) => f.path === 'index.js')!.sha256 }, { path: 'k.json', sha256: '0'.repeat(64) }]
    const r = await register(await manifest('linker', files))
    expect(r.status).toBe(400)
    expect(r.body).toMatchObject({ registered: false, name: 'linker', error: 'skill_folder_refused', path: 'linker/k.json' })
    expect(r.body.message).toBe('linker/k.json is a hard link (2 names for one file); a skill folder holds its own files only')
    expect(JSON.stringify(r.body)).not.toMatch(/[0-9a-f]{64}/)
    expect((await run('linker')).status).toBe(404)
  })

  it('one registration cannot exhaust the gateway’s memory: declared files over the limits are refused before they are read (review S3)', async () => {
    // The attack crashed the gateway (heap OOM) with 8 MiB of 0xFF bytes behind each of 256 names (hard links, refused now); 1 MiB is over the limit just as well.
    const pid = stack.gateway.pid
    const peakBefore = peakResidentKb(pid)
    const started = performance.now()
    const over = await register(await manifest('hoarder', copiedFiles(path.join(skillsDir, 'hoarder'), Buffer.alloc(1024 * 1024, 0xff), 2)))
    expect(over.status).toBe(400)
    expect(over.body).toMatchObject({ registered: false, name: 'hoarder', manifestHash: '', error: 'skill_too_large', path: 'index.js' })
    expect(over.body.message).toBe("index.js is 1048576 bytes; a skill file may have at most 524288 (the static analysis's limit). It was not read")
    // Files within that limit, 24 of them: refused where the files read reach the per-skill budget (8 MiB).
    const within = await register(await manifest('stacker', copiedFiles(path.join(skillsDir, 'stacker'), Buffer.from(`/*${'x'.repeat(512 * 1024 - 4)}*/`), 24)))
    expect(within.status).toBe(400)
    expect(within.body).toMatchObject({ error: 'skill_too_large', path: 'f16.js', message: expect.stringContaining('over 8388608 bytes in all') })
    expect(performance.now() - started).toBeLessThan(5000)
    // Read whole, the first alone held 256 MiB (and decoded, twice that): at most the budget was read here.
    expect(peakResidentKb(pid) - peakBefore).toBeLessThan(64 * 1024)
    expect((await stack.get('/v1/health')).status).toBe(200)
    expect(stack.gateway.child.exitCode).toBeNull()
  })

  it('twelve concurrent runs: two run, ten get 429 too_many_runs; a third while two run gets 429, and runs once they finish', async () => {
    const slow = 'export async function run(input) {\n  await new Promise((resolve) => setTimeout(resolve, input.ms))\n  return { slept: input.ms }\n}\n'
    writeFiles(path.join(skillsDir, 'sleeper'), { 'index.js': slow })
    expect((await register(await manifest('sleeper', hashSkillFolder(path.join(skillsDir, 'sleeper'))))).status).toBe(200)

    const twelve = await Promise.all(Array.from({ length: 12 }, () => run('sleeper', { ms: 2500 })))
    const statuses = twelve.map((r) => r.status).sort()
    expect(statuses).toEqual([200, 200, ...Array(10).fill(429)])
    for (const r of twelve.filter((x) => x.status === 429)) expect(r.body).toMatchObject({ error: 'too_many_runs' })
    for (const r of twelve.filter((x) => x.status === 200)) expect(r.body.output).toEqual({ slept: 2500 })

    const two = [run('sleeper', { ms: 3000 }), run('sleeper', { ms: 3000 })]
    await new Promise((resolve) => setTimeout(resolve, 500))
    const third = await run('sleeper', { ms: 10 })
    expect(third.status).toBe(429)
    expect((await Promise.all(two)).map((r) => r.status)).toEqual([200, 200])
    expect((await run('sleeper', { ms: 10 })).body.output).toEqual({ slept: 10 })
    // Every run's private root is gone afterwards.
    expect(readdirSync(path.join(stack.dataDir, 'run', 'skill-roots'))).toEqual([])
  }, 60_000)
})

describe('a machine without bubblewrap', () => {
  let stack: Stack
  beforeAll(async () => {
    // PATH without bwrap: what a fresh machine without the Debian package looks like to the gateway.
    const emptyBin = tempDataDir()
    stack = new Stack({ env: { PATH: emptyBin, SERVICE_SKILL_PUBLISHERS: testPublisher.address } })
    await stack.startSigner()
    await stack.startGateway()
  }, 60_000)
  afterAll(() => stack?.stop())

  it('says so once at start, naming the package, and runs answer 503 sandbox_unavailable with the same text', async () => {
    await stack.gateway.waitForLine(/skills are disabled/)
    const warnings = stack.gateway.lines.filter((l) => /skills are disabled/.test(l))
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatch(/bwrap not found on PATH/)
    expect(warnings[0]).toMatch(/Debian package `bubblewrap`/)
    const dir = path.join(stack.dataDir, 'skills', 'fine')
    writeFiles(dir, { 'index.js': BENIGN })
    // Registration still works (a listed publisher: no approver needed here).
    const r = await stack.post('/v1/skills/register', await manifest('fine', hashSkillFolder(dir)))
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    const ran = await stack.post('/v1/skills/fine/run', { input: null })
    expect(ran.status).toBe(503)
    expect(ran.body.error).toBe('sandbox_unavailable')
    expect(warnings[0]).toContain(ran.body.message)
    rmSync(dir, { recursive: true })
  })
})
