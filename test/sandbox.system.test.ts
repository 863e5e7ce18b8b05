// The skill sandbox itself, under real bubblewrap: skills that try what the
// static analysis would have refused still cannot do it.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRpcServer, type RpcServer } from '@countersign/shared'
import { runSandboxed, resultOf, type SandboxLimits } from '../services/gateway/src/skills/sandbox/runSkill.js'
import { createRunRoot } from '../services/gateway/src/skills/sandbox/runRoot.js'
import { checkSkillFiles, inspectSkillFolder, isRefusal } from '../services/gateway/src/skills/skillFiles.js'
import { createHash } from 'node:crypto'
import { tempDataDir } from './support/processes.js'

let dir: string
let api: RpcServer
let apiSocket: string
const submitted: unknown[] = []
const limits: SandboxLimits = { memoryMb: 64, timeoutMs: 3000, allowSpawn: false, filesystem: false }

function skill(name: string, source: string) {
  const root = path.join(dir, 'skills', name)
  mkdirSync(root, { recursive: true })
  writeFileSync(path.join(root, 'index.js'), source)
  return root
}
const run = (name: string, source: string, o: Partial<SandboxLimits> = {}, input: unknown = null) =>
  runSandboxed({ skillRoot: skill(name, source), entry: 'index.js', input, apiSocket, limits: { ...limits, ...o } })

beforeAll(async () => {
  dir = tempDataDir()
  mkdirSync(path.join(dir, 'keystore'), { recursive: true })
  writeFileSync(path.join(dir, 'keystore', 'secret.json'), '{"key":"do not read"}')
  apiSocket = path.join(dir, 'run', 'api.sock')
  api = createRpcServer({ socketPath: apiSocket, methods: { submitIntent: (p) => (submitted.push(p), { status: 200, body: { ok: true } }) } })
  await api.listen()
})
afterAll(() => api?.close())

describe('the sandbox (bubblewrap + Node permissions)', () => {
  it('runs a skill with its input and its API', async () => {
    const r = await run('ok', 'export async function run(input, api) { const res = await api.submitIntent({ hello: input.n }); return { doubled: input.n * 2, res } }', {}, { n: 21 })
    expect(r.error).toBeUndefined()
    expect(r.exitCode).toBe(0)
    expect(resultOf(r.output)).toEqual({ doubled: 42, res: { status: 200, body: { ok: true } } })
    expect(submitted).toContainEqual({ intent: { hello: 21 } })
  })

  it('cannot open a TCP connection', async () => {
    const r = await run(
      'tcp',
      `const net = await import('node:' + 'net')
       export async function run() {
         return await new Promise((resolve) => {
           const s = net.connect(80, '93.184.216.34')
           s.on('connect', () => resolve('connected'))
           s.on('error', (e) => resolve(e.code))
           setTimeout(() => resolve('timeout'), 1500)
         })
       }`,
    )
    expect(r.exitCode).toBe(0)
    // The TCP socket itself is refused (the filter allows AF_UNIX only); without the filter, no route out.
    expect(resultOf(r.output)).toBe('EAFNOSUPPORT')
  })

  // Found by review: a TCP server on the run's own loopback, 200 clients and nothing read parked 700 MiB in
  // kernel socket buffers in a run of memoryMb 16, which no process's resident memory shows.
  it('cannot hold memory in kernel socket buffers: no TCP on its loopback, and at most 64 descriptors per process', async () => {
    const src = `const net = await import('node:' + 'net'); const cp = await import('node:' + 'child_process')
       export async function run() {
         const tcp = await new Promise((resolve) => {
           const server = net.createServer()
           server.on('error', (e) => resolve(e.code))
           server.listen(0, '127.0.0.1', () => resolve('listening'))
         })
         // Socket pairs (AF_UNIX, allowed): the stdio of child processes, 100 asked for.
         const errors = new Set()
         const children = []
         for (let i = 0; i < 100; i++) {
           try {
             const c = cp.spawn('/bin/sleep', ['5'], { stdio: ['pipe', 'pipe', 'pipe'] })
             c.on('error', (e) => errors.add(e.code))
             children.push(c)
           } catch (e) {
             errors.add(e.code)
           }
         }
         await new Promise((resolve) => setTimeout(resolve, 200))
         const started = children.filter((c) => c.pid)
         // (kill only what started: a failed spawn's pid may be 0, the whole process group)
         for (const c of started) c.kill('SIGKILL')
         return { tcp, errors: [...errors], spawned: started.length }
       }`
    const r = await run('sockets', src, { allowSpawn: true, memoryMb: 64 })
    const seen = resultOf(r.output) as { tcp: string; errors: string[]; spawned: number }
    expect(seen, r.stderr + r.output).not.toBeNull()
    expect(seen.tcp).toBe('EAFNOSUPPORT')
    // Three descriptors per child: the limit stops it well before 100.
    expect(seen.errors).toContain('EMFILE')
    expect(seen.spawned).toBeGreaterThan(0)
    expect(seen.spawned).toBeLessThan(25)
  })

  it('cannot see the keystore or the data dir', async () => {
    const target = path.join(dir, 'keystore', 'secret.json')
    const r = await run(
      'peek',
      `const fs = await import('node:' + 'fs')
       export function run() {
         try { return fs.readFileSync(${JSON.stringify(target)}, 'utf8') } catch (e) { return e.code }
       }`,
    )
    expect(r.exitCode).toBe(0)
    expect(['ERR_ACCESS_DENIED', 'ENOENT']).toContain(resultOf(r.output))
  })

  it('cannot write a file unless the manifest grants the filesystem, and then only /tmp', async () => {
    const src = `const fs = await import('node:' + 'fs')
       export function run() {
         const out = {}
         for (const p of ['/tmp/x', '/skill/x']) { try { fs.writeFileSync(p, 'a'); out[p] = 'written' } catch (e) { out[p] = e.code } }
         return out
       }`
    expect(resultOf((await run('nofs', src)).output)).toEqual({ '/tmp/x': 'ERR_ACCESS_DENIED', '/skill/x': 'ERR_ACCESS_DENIED' })
    const granted = resultOf((await run('fs', src, { filesystem: true })).output) as Record<string, string>
    expect(granted['/tmp/x']).toBe('written')
    expect(granted['/skill/x']).not.toBe('written')
  })

  it('cannot start a process unless allowSpawn', async () => {
    const src = `const cp = await import('node:' + 'child_process')
       export function run() { try { cp.spawnSync('/bin/true'); return 'spawned' } catch (e) { return e.code } }`
    expect(resultOf((await run('nospawn', src)).output)).toBe('ERR_ACCESS_DENIED')
    expect(resultOf((await run('spawn', src, { allowSpawn: true })).output)).toBe('spawned')
  })

  it('runs at niceness 19, its child processes too: a busy skill yields the processor to the services', async () => {
    const src = `const os = await import('node:' + 'os'); const cp = await import('node:' + 'child_process')
       export function run() { return { own: os.getPriority(), child: cp.spawnSync('/usr/bin/nice', { encoding: 'utf8' }).stdout.trim() } }`
    const r = await run('nice', src, { allowSpawn: true })
    expect(r.error, r.stderr).toBeUndefined()
    expect(resultOf(r.output)).toEqual({ own: 19, child: '19' })
  })

  it('its /tmp holds no more than its memory budget: writes beyond it fail with ENOSPC, from Node or from a child process (review S2)', async () => {
    // Before: /tmp was an unbounded tmpfs, and tmpfs pages are not resident memory: 1.5 GB went in with memoryMb 16.
    const writer = `const fs = await import('node:' + 'fs')
       export function run() {
         const chunk = Buffer.alloc(1024 * 1024, 1)
         let written = 0
         try { for (let i = 0; i < 64; i++) { fs.appendFileSync('/tmp/fill', chunk); written += chunk.length } } catch (e) { return { written, code: e.code } }
         return { written }
       }`
    const fromNode = await run('tmpfill', writer, { memoryMb: 16, filesystem: true })
    expect(fromNode.error, fromNode.stderr).toBeUndefined()
    const filled = resultOf(fromNode.output) as { written: number; code?: string }
    expect(filled.code).toBe('ENOSPC')
    expect(filled.written).toBeLessThanOrEqual(16 * 1024 * 1024)
    expect(filled.written).toBeGreaterThan(8 * 1024 * 1024)

    const shell = (script: string) => `const cp = await import('node:' + 'child_process')
       export function run() {
         const r = cp.spawnSync('/bin/sh', ['-c', ${JSON.stringify(script)}], { encoding: 'utf8' })
         return { status: r.status, out: r.stdout.trim(), err: r.stderr.trim() }
       }`
    const child = await run('tmpfill-child', shell('head -c 64M /dev/zero > /tmp/fill; echo $?; wc -c < /tmp/fill'), { memoryMb: 16, filesystem: true, allowSpawn: true })
    expect(child.error, child.stderr).toBeUndefined()
    const seen = resultOf(child.output) as { out: string; err: string }
    const [status, size] = seen.out.split('\n').map(Number)
    expect(status).not.toBe(0)
    expect(seen.err).toMatch(/No space left on device/)
    expect(size).toBeLessThanOrEqual(16 * 1024 * 1024)
  })

  it('what /tmp holds counts with the resident memory: a run over its budget in both together is killed (memory)', async () => {
    // 30 MiB held (about 70-80 MiB resident with the runtime) and 31 MiB in /tmp: each within memoryMb 32 and its
    // 64 MiB allowance for the runtime (96 MiB), together over it.
    const r = await run(
      'tmphog',
      `const fs = await import('node:' + 'fs')
       export async function run() {
         const held = Buffer.alloc(30 * 1024 * 1024, 1)
         for (let i = 0; i < 31; i++) fs.appendFileSync('/tmp/fill', held.subarray(0, 1024 * 1024))
         await new Promise((resolve) => setTimeout(resolve, 1500))
         return held.length
       }`,
      { memoryMb: 32, filesystem: true },
    )
    expect(r.error).toBe('memory')
  })

  it('without the filesystem permission no path is writable, not even to a child process outside Node’s permission model: /, /tmp, /dev, /dev/shm', async () => {
    const src = `const cp = await import('node:' + 'child_process')
       export function run() {
         const out = {}
         for (const p of ['/probe', '/tmp/probe', '/dev/probe', '/dev/shm/probe', '/run/probe', '/skill/probe']) {
           const r = cp.spawnSync('/bin/sh', ['-c', 'head -c 1M /dev/zero > ' + p], { encoding: 'utf8' })
           out[p] = r.status === 0 ? 'written' : r.stderr.trim().replace(/^.*: /, '')
         }
         // Device nodes still work: writing to /dev/null is not storing anything.
         out['/dev/null'] = cp.spawnSync('/bin/sh', ['-c', 'echo x > /dev/null']).status === 0 ? 'written' : 'refused'
         return out
       }`
    const r = await run('nowrite', src, { allowSpawn: true })
    expect(r.error, r.stderr).toBeUndefined()
    const seen = resultOf(r.output) as Record<string, string>
    for (const p of ['/probe', '/tmp/probe', '/dev/probe', '/dev/shm/probe', '/run/probe', '/skill/probe']) expect(seen[p], p).toMatch(/Read-only file system/)
    expect(seen['/dev/null']).toBe('written')
    // With the permission, /tmp alone is writable.
    const granted = resultOf((await run('somewrite', src, { allowSpawn: true, filesystem: true })).output) as Record<string, string>
    expect(granted['/tmp/probe']).toBe('written')
    expect(granted['/probe']).toMatch(/Read-only file system/)
    expect(granted['/dev/shm/probe']).toMatch(/Read-only file system/)
  })

  it('is killed at its memory limit', async () => {
    const r = await run('hog', 'export function run() { const keep = []; for (;;) keep.push(new Array(1e6).fill(Math.random())) }', { memoryMb: 32 })
    expect(r.error).toBe('memory')
    expect(r.exitCode).not.toBe(0)
  })

  // Found by review: the watch read only the main thread's children, and counted no tasks at all.
  // Node 22 and later pass the permission model on to a node child (in NODE_OPTIONS), which then
  // may start no worker and read nothing; a skill with allowSpawn can drop it through sh, as here.
  const nodeOutsidePermissions = (code: string, env: Record<string, string> = {}) => `const cp = await import('node:' + 'child_process')
       export function run() {
         return cp.spawnSync('/bin/sh', ['-c', 'unset NODE_OPTIONS; exec "$0" -e "$1"', process.execPath, ${JSON.stringify(code)}], { env: ${JSON.stringify(env)} }).status
       }`

  it('a process started from a thread other than the main one counts towards the memory limit', async () => {
    // A child node whose worker thread starts the hog: that hog is listed under the worker's thread only.
    const hog = `const b = Buffer.alloc(400 << 20, 1); setTimeout(() => b.length, 4000)`
    const viaWorker = `const { Worker } = require('node:worker_threads'); new Worker(${JSON.stringify(`require('node:child_process').spawnSync(process.execPath, ['-e', ${JSON.stringify(hog)}])`)}, { eval: true })`
    const r = await run('threadchild', nodeOutsidePermissions(viaWorker), { allowSpawn: true, memoryMb: 32, timeoutMs: 8000 })
    expect(r.error).toBe('memory')
  })

  it('is killed when it holds more tasks than a run may (error tasks)', async () => {
    // A child node with a 128-thread libuv pool, all started by 128 reads at once.
    const many = `const fs = require('node:fs'); for (let i = 0; i < 128; i++) fs.stat('/', () => {}); setTimeout(() => {}, 4000)`
    const r = await run('tasks', nodeOutsidePermissions(many, { UV_THREADPOOL_SIZE: '128' }), { allowSpawn: true, memoryMb: 64, timeoutMs: 8000 })
    expect(r.error).toBe('tasks')
    // An ordinary run, spawning a child node too, stays well below the limit.
    const normal = await run('fewtasks', nodeOutsidePermissions('setTimeout(() => {}, 300)'), { allowSpawn: true })
    expect(normal.error).toBeUndefined()
    expect(resultOf(normal.output)).toBe(0)
  })

  // Found by review: memory the kernel holds for no process (a memfd, a SysV segment or queue, a POSIX
  // queue, written and never mapped) escaped the watch, 512 MiB in a run of memoryMb 16, and a skill
  // could make user namespaces of its own. perl's syscall() makes each call raw, outside any library.
  it('a child process cannot make memory outside any process, nor namespaces: those system calls are refused', async () => {
    const numbers: Record<string, Record<string, number>> = {
      x64: { memfd_create: 319, shmget: 29, msgget: 68, mq_open: 240, unshare: 272, clone: 56, clone3: 435 },
      arm64: { memfd_create: 279, shmget: 194, msgget: 186, mq_open: 180, unshare: 97, clone: 220, clone3: 435 },
    }
    const nr = numbers[process.arch]
    if (!nr) throw new Error(`this test knows the system-call numbers of x64 and arm64, not ${process.arch}`)
    const CLONE_NEWUSER = 0x10000000
    const SIGCHLD = 17
    // Each line: name, then the call's result and errno. A clone that succeeds is a child, which leaves at once.
    const perl = [
      'use POSIX (); my $name = "hold";',
      'sub t { my ($n, $r) = @_; print "$n $r ", ($r == -1 ? $! + 0 : 0), "\\n" }',
      `t("memfd_create", syscall(${nr.memfd_create}, $name, 0));`,
      `t("shmget", syscall(${nr.shmget}, 0, 1048576, 0x3c0 | 0x200));`,
      `t("msgget", syscall(${nr.msgget}, 0, 0x180 | 0x200));`,
      `t("mq_open", syscall(${nr.mq_open}, $name, 0x42, 0x180, 0));`,
      `my $c = syscall(${nr.clone}, ${CLONE_NEWUSER | SIGCHLD}, 0, 0, 0, 0); POSIX::_exit(0) if $c == 0; waitpid($c, 0) if $c > 0; t("clone_newuser", $c);`,
      // After the clone: once in a namespace of its own, a process could not make another.
      `t("unshare", syscall(${nr.unshare}, ${CLONE_NEWUSER}));`,
      `my $f = syscall(${nr.clone}, ${SIGCHLD}, 0, 0, 0, 0); POSIX::_exit(0) if $f == 0; waitpid($f, 0) if $f > 0; t("clone", $f);`,
      `t("clone3", syscall(${nr.clone3}, 0, 0));`,
    ].join(' ')
    const src = `const cp = await import('node:' + 'child_process')
       export function run() {
         const r = cp.spawnSync('/usr/bin/perl', ['-e', ${JSON.stringify(perl)}], { encoding: 'utf8' })
         return { status: r.status, out: r.stdout, err: r.stderr }
       }`
    const r = await run('syscalls', src, { allowSpawn: true, filesystem: true, memoryMb: 16 })
    expect(r.error, r.stderr).toBeUndefined()
    const seen = resultOf(r.output) as { status: number; out: string; err: string }
    expect(seen.status, seen.err).toBe(0)
    const results = Object.fromEntries(seen.out.trim().split('\n').map((line) => {
      const [name, result, errno] = line.split(' ')
      return [name, { result: Number(result), errno: Number(errno) }]
    }))
    const EPERM = 1
    for (const name of ['memfd_create', 'shmget', 'msgget', 'mq_open', 'unshare', 'clone_newuser']) expect(results[name], name).toEqual({ result: -1, errno: EPERM })
    // clone3's flags are in memory a filter cannot read: it is "not implemented", and the C library uses clone.
    expect(results.clone3).toEqual({ result: -1, errno: 38 })
    // An ordinary fork still works.
    expect(results.clone!.result).toBeGreaterThan(0)
    // And node itself runs under the filter: the other tests of this file.
  })

  it('is killed at its timeout', async () => {
    const started = Date.now()
    const r = await run('loop', 'export function run() { for (;;) {} }', { timeoutMs: 1000 })
    expect(r.error).toBe('timeout')
    expect(Date.now() - started).toBeLessThan(3000)
  })

  it('a crash is reported as such', async () => {
    const r = await run('crash', 'export function run() { throw new Error("boom") }')
    expect(r.error).toBe('crash')
    expect(r.stderr).toContain('boom')
  })

  it('sees only the declared files: the skill lists /, its own root and the data dir (with ls, outside Node\'s permission model)', async () => {
    // The skill folder as the gateway prepares a run: inspected, hashes
    // checked, the verified bytes copied into a private root.
    const source = `const cp = await import('node:' + 'child_process')
      const ls = (args) => { const r = cp.spawnSync('/bin/ls', args, { encoding: 'utf8' }); return (r.stdout + r.stderr).trim().split('\\n').filter(Boolean) }
      export function run(input) {
        return { root: ls(['-A', '/']), skill: ls(['-AR', '/skill']), dataDir: ls(['-A', input.dataDir]), keystore: ls(['-A', input.dataDir + '/keystore']) }
      }`
    const skillsDir = path.join(dir, 'skills-visible')
    const root = path.join(skillsDir, 'lister')
    mkdirSync(path.join(root, 'lib'), { recursive: true })
    writeFileSync(path.join(root, 'index.js'), source)
    writeFileSync(path.join(root, 'lib', 'table.json'), '[1, 2]')
    // On disk but not in the manifest: must not exist inside.
    writeFileSync(path.join(root, 'lib', 'helper.js'), 'export const leaked = true\n')
    writeFileSync(path.join(root, 'notes.txt'), 'undeclared')
    const sha = (p: string) => createHash('sha256').update(readFileSync(path.join(root, p))).digest('hex')
    const folder = await inspectSkillFolder(skillsDir, 'lister')
    if (isRefusal(folder)) throw new Error(folder.message)
    const checked = await checkSkillFiles(folder, ['index.js', 'lib/table.json'].map((p) => ({ path: p, sha256: sha(p) })))
    expect(checked.mismatches).toEqual([])
    const runRoot = await createRunRoot(path.join(dir, 'run'), checked.verified)
    try {
      const r = await runSandboxed({ skillRoot: runRoot.dir, entry: 'index.js', input: { dataDir: dir }, apiSocket, limits: { ...limits, allowSpawn: true } })
      expect(r.error, r.stderr).toBeUndefined()
      const seen = resultOf(r.output) as { root: string[]; skill: string[]; dataDir: string[]; keystore: string[] }
      expect(seen.root).toEqual(expect.arrayContaining(['skill', 'usr', 'countersign']))
      // / holds the system directories, the skill, the harness, the API socket and the mounts bwrap makes; nothing of the host's data.
      for (const entry of seen.root) expect(['bin', 'lib', 'lib64', 'usr', 'etc', 'skill', 'countersign', 'run', 'tmp', 'proc', 'dev']).toContain(entry)
      expect(seen.root).not.toContain('root')
      expect(seen.root).not.toContain('var')
      expect(seen.skill).toEqual(['/skill:', 'index.js', 'lib', '/skill/lib:', 'table.json'])
      expect(seen.dataDir.join(' ')).toMatch(/No such file or directory/)
      expect(seen.keystore.join(' ')).toMatch(/No such file or directory/)
    } finally {
      await runRoot.remove()
    }
    expect(existsSync(runRoot.dir)).toBe(false)
  })
})
