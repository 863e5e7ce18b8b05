import { spawn, type ChildProcess } from 'node:child_process'
import { appendFileSync, mkdirSync, mkdtempSync } from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const logDir = path.join(repoRoot, 'test/artifacts/logs')

const children = new Set<ChildProcess>()
let exitHookInstalled = false

/** Children die with the test process, whatever happens to it. */
export function killOnExit(child: ChildProcess): void {
  children.add(child)
  child.once('exit', () => children.delete(child))
  if (!exitHookInstalled) {
    exitHookInstalled = true
    process.once('exit', () => {
      for (const c of children) c.kill('SIGKILL')
    })
  }
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo
      srv.close(() => resolve(port))
    })
  })
}

/** A fresh, short data directory (Unix socket paths must stay under 107 bytes). */
export function tempDataDir(): string {
  return mkdtempSync(path.join(os.tmpdir(), 'cs-'))
}

export async function waitFor<T>(fn: () => Promise<T | null | false> | T | null | false, opts: { timeoutMs?: number; intervalMs?: number; what?: string } = {}): Promise<T> {
  const deadline = Date.now() + (opts.timeoutMs ?? 10_000)
  let lastError: unknown
  for (;;) {
    try {
      const v = await fn()
      if (v !== null && v !== false && v !== undefined) return v as T
    } catch (err) {
      lastError = err
      if ((err as Error)?.message?.includes('exited')) throw err
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${opts.what ?? 'a condition'}${lastError ? `: ${(lastError as Error).message}` : ''}`)
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 50))
  }
}

export interface ServiceProcess {
  name: string
  child: ChildProcess
  pid: number
  output(): string
  waitForLine(re: RegExp, timeoutMs?: number): Promise<string>
  stop(signal?: NodeJS.Signals): Promise<number | null>
  exited(): Promise<number | null>
}

/** Runs a compiled service (`node entry`) with its output captured and logged under test/artifacts/logs. */
export function spawnService(name: string, entry: string, env: Record<string, string>, opts: { stdin?: string } = {}): ServiceProcess {
  const child = spawn(process.execPath, [entry], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  killOnExit(child)
  if (opts.stdin !== undefined) child.stdin?.end(opts.stdin)
  mkdirSync(logDir, { recursive: true })
  const logFile = path.join(logDir, `${name}-${child.pid}.log`)
  let out = ''
  const onData = (d: Buffer) => {
    out += d.toString()
    appendFileSync(logFile, d)
  }
  child.stdout?.on('data', onData)
  child.stderr?.on('data', onData)
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  return {
    name,
    child,
    pid: child.pid!,
    output: () => out,
    exited: () => exit,
    async waitForLine(re, timeoutMs = 15_000) {
      return waitFor(
        () => {
          const line = out.split('\n').find((l) => re.test(l))
          if (line) return line
          if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode} before printing ${re}:\n${out}`)
          return null
        },
        { timeoutMs, what: `${name} to print ${re}` },
      )
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode
      const force = setTimeout(() => child.kill('SIGKILL'), 5000)
      child.kill(signal)
      const code = await exit
      clearTimeout(force)
      return code
    },
  }
}
