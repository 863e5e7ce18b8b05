// The skill sandbox itself, under real bubblewrap: skills that try what the
// static analysis would have refused still cannot do it.
import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRpcServer, type RpcServer } from '@countersign/shared'
import { runSandboxed, resultOf, type SandboxLimits } from '../services/gateway/src/skills/sandbox/runSkill.js'
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
    expect(['ENETUNREACH', 'EACCES', 'EPERM']).toContain(resultOf(r.output))
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

  it('is killed at its memory limit', async () => {
    const r = await run('hog', 'export function run() { const keep = []; for (;;) keep.push(new Array(1e6).fill(Math.random())) }', { memoryMb: 32 })
    expect(r.error).toBe('memory')
    expect(r.exitCode).not.toBe(0)
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
})
