// A review's attacks on skill runs, each reproduced as it was done: against
// the real gateway (registered with the publisher key, run under real
// bubblewrap, answered through the route), and, where the static analysis
// would refuse the attack before it runs, against the sandbox runner itself.
import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRpcServer, type RpcServer } from '@countersign/shared'
import { MAX_RESULT_DEPTH, MAX_STREAM_BYTES, runSandboxed, resultOf, type SandboxLimits } from '../services/gateway/src/skills/sandbox/runSkill.js'
import { tempDataDir } from './support/processes.js'
import { writeTestSkill } from './support/skills.js'
import { Stack } from './support/stack.js'

/** The sandbox's whole environment (bwrap --clearenv --setenv PATH): what process.env would give away. */
const SANDBOX_PATH = '/usr/bin:/bin'

describe('skill runs against the running stack (review)', () => {
  let stack: Stack
  const sandbox = { memoryMb: 64, timeoutMs: 10_000, allowSpawn: false }

  /** Registers `source` as the skill `name` (signed by the publisher, with the operator token); the scan must pass it. */
  async function publish(name: string, source: string) {
    const r = await register(name, source)
    expect(r.status, JSON.stringify(r.body)).toBe(200)
  }
  async function register(name: string, source: string) {
    const manifest = await writeTestSkill(path.join(stack.dataDir, 'skills'), name, source, { sandbox })
    return stack.post('/v1/skills/register', manifest, { authorization: `Bearer ${stack.operatorToken}` })
  }
  const run = (name: string, input: unknown = null) => stack.post(`/v1/skills/${name}/run`, { input })

  beforeAll(async () => {
    stack = new Stack()
    await stack.start({ approver: true })
  }, 60_000)
  afterAll(() => stack?.stop())

  it("process through import('node:process') is refused at registration (it scanned clean)", async () => {
    // Found by review: only `import … from 'process'` and require('process') were followed as process.
    for (const [name, source] of [
      ['import-process', "export async function run() {\n  const p = (await import('node:process')).default\n  p.getBuiltinModule('child_process')\n  return p.env\n}\n"],
      ['import-process-member', "export async function run(input) {\n  return (await import('node:process')).default[input.k](input.m)\n}\n"],
    ]) {
      const r = await register(name!, source!)
      expect(r.status).toBe(400)
      expect(r.body).toMatchObject({ registered: false, name, error: 'static_scan_failed' })
      expect(r.body.scanFindings.join('\n')).toMatch(/index\.js:\d+: process_env: import\('process'\) hands out process/)
    }
  })

  describe('the Function constructor reached without naming it: the scan sees nothing, the run cannot generate code', () => {
    const payload = `'return [process.env, typeof process.getBuiltinModule("child_process").execSync]'`
    it.each([
      [
        'prototype-keys',
        `export function run() {
  const fp = Object.getPrototypeOf(function () {})
  let F
  for (const k of Reflect.ownKeys(fp)) if (typeof k === 'string' && k.length === 11 && k[0] === 'c') F = fp[k]
  return F(${payload})()
}
`,
      ],
      [
        'descriptor-values',
        `export async function run() {
  const F = Object.values(Object.getOwnPropertyDescriptors(Object.getPrototypeOf(async function () {}))).map((d) => d.value).find((v) => typeof v === 'function')
  return await F(${payload})()
}
`,
      ],
    ])('%s', async (name, source) => {
      await publish(name, source)
      const r = await run(name)
      expect(r.status).toBe(200)
      expect(r.body).toMatchObject({ error: 'crash', output: null })
      expect(r.body.stderr).toMatch(/EvalError: Code generation from strings disallowed for this context/)
      expect(JSON.stringify(r.body)).not.toContain(SANDBOX_PATH)
    })
  })

  describe('the result comes from the harness alone, and no result makes the answer a 500', () => {
    it.each([5000, 20_000])('a skill that prints {"result": [[[…]]]} %i deep and throws: 200, crash, no output', async (depth) => {
      // Found by review: the last stdout line of a crashed run was parsed as its result, and serialising it overflowed the stack (500 internal_error).
      await publish(`prints-deep-${depth}`, `export function run(input) {
  console.log('{"result":' + '['.repeat(input.depth) + ']'.repeat(input.depth) + '}')
  throw new Error('after printing')
}
`)
      const r = await run(`prints-deep-${depth}`, { depth })
      expect(r.status, JSON.stringify(r.body).slice(0, 300)).toBe(200)
      expect(r.body).toMatchObject({ error: 'crash', output: null })
      expect(r.body.stderr).toContain('after printing')
    })

    it('a crashed run has no output, whatever it printed; a run that ends well has what run() returned, not what it printed', async () => {
      await publish('forger', `export function run(input) {
  console.log('{"result":"forged"}')
  if (input.crash) throw new Error('boom')
  return 'real'
}
`)
      expect((await run('forger', { crash: true })).body).toMatchObject({ error: 'crash', output: null })
      expect((await run('forger', { crash: false })).body).toEqual({ exitCode: 0, output: 'real', durationMs: expect.any(Number) })
    })

    it(`a result nested deeper than ${MAX_RESULT_DEPTH} levels is refused in the answer's error shape (1000, 5000 and 20000 deep); up to it, it comes back`, async () => {
      await publish('returns-deep', `export function run(input) {
  let v = null
  for (let i = 0; i < input.depth; i++) v = [v]
  return v
}
`)
      for (const depth of [1000, 5000, 20_000]) {
        const r = await run('returns-deep', { depth })
        expect(r.status, JSON.stringify(r.body).slice(0, 300)).toBe(200)
        expect(r.body).toMatchObject({ error: 'crash', output: null })
        // 1000 deep the harness serialises it and the gateway refuses it; deeper, the harness's own JSON.stringify fails first (a crash too).
        expect(r.body.stderr).toMatch(depth === 1000 ? new RegExp(`countersign: the result is nested more than ${MAX_RESULT_DEPTH} levels deep`) : /RangeError: Maximum call stack size exceeded/)
      }
      const within = await run('returns-deep', { depth: MAX_RESULT_DEPTH })
      expect(within.body.error).toBeUndefined()
      expect(JSON.stringify(within.body.output)).toBe(`${'['.repeat(MAX_RESULT_DEPTH)}null${']'.repeat(MAX_RESULT_DEPTH)}`)
      expect((await run('returns-deep', { depth: MAX_RESULT_DEPTH + 1 })).body).toMatchObject({ error: 'crash', output: null })
    })
  })

  describe('logs are logs', () => {
    it('a skill that logs ~70 KB (stdout, then stderr) and returns {ok: 1} gets {ok: 1}', async () => {
      // Found by review: only the first 64 KiB of stdout were kept, and the result line came after them.
      await publish('chatty', `export function run(input) {
  for (let i = 0; i < 700; i++) (input.stderr ? console.error : console.log)('x'.repeat(99))
  return { ok: 1 }
}
`)
      for (const stderr of [false, true]) {
        const r = await run('chatty', { stderr })
        expect(r.body).toEqual({ exitCode: 0, output: { ok: 1 }, durationMs: expect.any(Number) })
      }
    })

    it("a skill returning '€'.repeat(30000) gets it back intact", async () => {
      // Found by review: each pipe read was decoded on its own (a split character came back as U+FFFD), and 90 KB was past the 64 KiB kept.
      await publish('euros', "export function run() {\n  return '€'.repeat(30000)\n}\n")
      const r = await run('euros')
      expect(r.body.error).toBeUndefined()
      expect(r.body.output).toBe('€'.repeat(30000))
    })

    it("256 MiB on stdout costs the gateway nothing: a skill's stdout is not read, and its result comes back", async () => {
      await publish('shouter', `export function run() {
  const chunk = 'x'.repeat(65536)
  for (let i = 0; i < 4096; i++) process.stdout.write(chunk)
  return { ok: 1 }
}
`)
      const r = await run('shouter')
      expect(r.body).toMatchObject({ exitCode: 0, output: { ok: 1 } })
    })

    it(`a run that writes more than ${MAX_STREAM_BYTES} bytes to stderr is stopped at once, saying why, not read until its timeout`, async () => {
      // Each write waits for the last (a loop that does not wait only fills its own memory, and is stopped for that).
      await publish('stderr-flood', "export async function run() {\n  const chunk = 'x'.repeat(65536)\n  for (;;) await new Promise((resolve) => process.stderr.write(chunk, resolve))\n}\n")
      const r = await run('stderr-flood')
      expect(r.status).toBe(200)
      expect(r.body).toMatchObject({ error: 'crash', output: null })
      expect(r.body.stderr).toMatch(new RegExp(`countersign: the run wrote more than ${MAX_STREAM_BYTES} bytes to stderr; it was stopped$`))
      expect(r.body.durationMs).toBeLessThan(sandbox.timeoutMs / 2)
      expect((await stack.get('/v1/health')).status).toBe(200)
    })
  })
})

// What the static analysis refuses (fs, child_process) a skill could still reach if the scan missed it:
// the runner's own limits must hold without it. Run directly, as the route runs a registered skill.
describe('the sandbox runner without the scan in front (allowSpawn)', () => {
  let dir: string
  let api: RpcServer
  let apiSocket: string
  const limits: SandboxLimits = { memoryMb: 64, timeoutMs: 10_000, allowSpawn: true, filesystem: false }
  const runSource = (name: string, source: string) => {
    const root = path.join(dir, 'skills', name)
    mkdirSync(root, { recursive: true })
    writeFileSync(path.join(root, 'index.js'), source)
    return runSandboxed({ skillRoot: root, entry: 'index.js', input: null, apiSocket, limits })
  }

  beforeAll(async () => {
    dir = tempDataDir()
    apiSocket = path.join(dir, 'run', 'api.sock')
    api = createRpcServer({ socketPath: apiSocket, methods: { submitIntent: () => ({ status: 200, body: {} }) } })
    await api.listen()
  })
  afterAll(() => api?.close())

  const stopped = (r: Awaited<ReturnType<typeof runSandboxed>>, says: string) => {
    expect(r.error).toBe('crash')
    expect(r.output).toBe('')
    expect(r.stderr).toMatch(new RegExp(`countersign: the run wrote more than ${MAX_STREAM_BYTES} bytes ${says}; it was stopped$`))
    expect(r.durationMs).toBeLessThan(limits.timeoutMs / 2)
  }

  it('a child process pouring /dev/zero into stderr is stopped once it passed the limit, well before the timeout', async () => {
    // Found by review: the gateway read such a stream for the whole timeout.
    const r = await runSource('stderr-zero', `const cp = await import('node:' + 'child_process')
export async function run() {
  cp.spawn('/bin/sh', ['-c', 'cat /dev/zero >&2'], { stdio: 'inherit' })
  await new Promise((resolve) => setTimeout(resolve, 60_000))
}
`)
    stopped(r, 'to stderr')
  })

  it('the result channel is the node process’s alone: a child process does not inherit it, and node itself pouring into it is stopped the same way', async () => {
    const child = await runSource('channel-child', `const cp = await import('node:' + 'child_process')
export function run() {
  return cp.spawnSync('/bin/sh', ['-c', 'echo x >&4'], { encoding: 'utf8' }).stderr.trim()
}
`)
    expect(resultOf(child.output)).toMatch(/4: Bad file descriptor/)
    const r = await runSource('channel-flood', `const fs = await import('node:' + 'fs')
export function run() {
  const chunk = Buffer.alloc(65536, 0x20)
  for (;;) fs.writeSync(4, chunk)
}
`)
    stopped(r, 'as its result')
  })

  it('a result written on the result channel by a run that then crashes is not its result', async () => {
    const r = await runSource('channel-forger', `const fs = await import('node:' + 'fs')
export function run() {
  fs.writeSync(4, '{"result":"forged"}\\n')
  throw new Error('boom')
}
`)
    expect(r.error).toBe('crash')
    expect(resultOf(r.output)).toBeNull()
  })
})
