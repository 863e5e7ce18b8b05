// Real child processes for system tests: compiled services started with
// `node entry.js`, their output captured line by line (kept in memory, written
// to test/artifacts/logs/<name>-<pid>.log, printable with dumpLogs()), and a
// guarantee that nothing we start outlives the test process.
import { spawn, type ChildProcess, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

function findRepoRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url))
  for (;;) {
    const pkg = path.join(dir, 'package.json')
    if (existsSync(pkg)) {
      try {
        if ((JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'countersign') return dir
      } catch {
        // not ours; keep walking up
      }
    }
    const parent = path.dirname(dir)
    if (parent === dir) return path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
    dir = parent
  }
}

/** The repository root (the directory of the `countersign` package.json). */
export const repoRoot = findRepoRoot()
/** Scratch output of the test run (gitignored): solc cache, service logs, screenshots. */
export const artifactsDir = path.join(repoRoot, 'test/artifacts')
export const logDir = path.join(artifactsDir, 'logs')

// ---------------------------------------------------------------- cleanup on exit

const tracked = new Set<ChildProcess>()
let hooksInstalled = false

function killTracked(): void {
  for (const child of tracked) {
    if (child.exitCode === null && child.signalCode === null) {
      try {
        child.kill('SIGKILL')
      } catch {
        // already gone
      }
    }
  }
  tracked.clear()
}

function installExitHooks(): void {
  if (hooksInstalled) return
  hooksInstalled = true
  // 'exit' covers a normal end, process.exit() and an uncaught exception.
  process.on('exit', killTracked)
  // A terminating signal skips 'exit': kill the children, then let the signal
  // have its default effect unless someone else (the test runner) handles it.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      killTracked()
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal)
    })
  }
}

/**
 * Kills `child` with SIGKILL when the test process exits or is terminated by
 * SIGINT/SIGTERM/SIGHUP. (Nothing can run if the test process itself gets
 * SIGKILL.) The hooks are registered once, on first use.
 */
export function killOnExit(child: ChildProcess): void {
  installExitHooks()
  if (child.exitCode !== null || child.signalCode !== null) return
  tracked.add(child)
  child.once('exit', () => tracked.delete(child))
}

// ---------------------------------------------------------------- small helpers

/** A TCP port that was free on 127.0.0.1 a moment ago (bind :0, read, close). Callers must handle EADDRINUSE. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer()
    srv.unref()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo
      srv.close((err) => (err ? reject(err) : resolve(port)))
    })
  })
}

/** Longest data-dir path we hand out: sockets live in <dir>/run/<name>.sock and sun_path holds 107 bytes. */
const MAX_DATA_DIR_BYTES = 60

/** The directories tempDataDir made for this test file. */
const madeDataDirs: string[] = []

/**
 * Removes the directories tempDataDir made for this test file; called by
 * test/support/tempDirs.setup.ts once every test of the file has passed.
 */
export function removeTempDataDirs(): void {
  for (const dir of madeDataDirs.splice(0)) rmSync(dir, { recursive: true, force: true })
}

/**
 * A fresh, empty, mode-0700 directory with a short path, e.g. /tmp/cs-Ab12Cd
 * (or /tmp/cs-signer-Ab12Cd with a prefix): Unix socket paths inside it must
 * stay under 107 bytes. Removed after the test file when all its tests
 * passed; kept, so that it can be read, when one failed.
 */
export function tempDataDir(prefix?: string): string {
  const label = prefix ? `cs-${prefix.replace(/[^A-Za-z0-9_.-]/g, '').replace(/^cs-/, '').slice(0, 16)}-` : 'cs-'
  let base = os.tmpdir()
  if (Buffer.byteLength(base) > 24 && existsSync('/tmp')) base = '/tmp'
  const dir = mkdtempSync(path.join(base, label))
  madeDataDirs.push(dir)
  if (Buffer.byteLength(dir) > MAX_DATA_DIR_BYTES) throw new Error(`temporary data dir ${dir} is too long for Unix socket paths inside it`)
  return dir
}

/** Throw this from a waitFor() callback to give up at once instead of retrying until the timeout. */
export class StopWaiting extends Error {
  override name = 'StopWaiting'
}

export interface WaitForOptions {
  /** Total time to keep trying (default 10 s). */
  timeoutMs?: number
  /** Pause between attempts (default 50 ms). */
  intervalMs?: number
  /** Named in the timeout error: "timed out after 10000 ms waiting for <what>". */
  what?: string
}

/**
 * Calls `fn` until it returns something other than null, undefined or false,
 * and resolves with that. A thrown error counts as "not yet" (its message is
 * kept for the timeout error), except StopWaiting, which rejects immediately.
 */
export async function waitFor<T>(fn: () => Promise<T | null | undefined | false> | T | null | undefined | false, opts: WaitForOptions = {}): Promise<T> {
  const timeoutMs = opts.timeoutMs ?? 10_000
  const intervalMs = opts.intervalMs ?? 50
  const deadline = Date.now() + timeoutMs
  let lastError: unknown
  for (;;) {
    try {
      const value = await fn()
      if (value !== null && value !== undefined && value !== false) return value as T
    } catch (err) {
      if (err instanceof StopWaiting) throw err
      lastError = err
    }
    if (Date.now() >= deadline) {
      const why = lastError ? ` (last error: ${(lastError as Error).message ?? String(lastError)})` : ''
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${opts.what ?? 'a condition'}${why}`)
    }
    await new Promise((r) => setTimeout(r, Math.max(0, Math.min(intervalMs, deadline - Date.now()))))
  }
}

// ---------------------------------------------------------------- services

export interface ExitStatus {
  code: number | null
  signal: NodeJS.Signals | null
}

export interface ServiceProcess {
  readonly name: string
  readonly pid: number
  readonly child: ChildProcess
  /** Every complete line printed so far, stdout and stderr interleaved in arrival order. */
  readonly lines: readonly string[]
  /** Lines of stdout only / stderr only. */
  readonly stdoutLines: readonly string[]
  readonly stderrLines: readonly string[]
  /** Where the output is appended: test/artifacts/logs/<name>-<pid>.log. */
  readonly logFile: string
  /** All output so far as one string (complete lines, plus any unterminated tail). */
  output(): string
  /**
   * Resolves with the first line (already printed or still to come) matching
   * `re`, searching from line index `opts.from` (default 0). Rejects when the
   * process exits without printing one, or after `timeoutMs` (default 15 s);
   * the error carries the end of the output.
   */
  waitForLine(re: RegExp, timeoutMs?: number, opts?: { from?: number }): Promise<string>
  /** Resolves once the process has exited and its output has been read to the end. */
  waitForExit(): Promise<ExitStatus>
  /** Same as waitForExit(), resolving with the exit code only (null after a signal). */
  exited(): Promise<number | null>
  /** Sends a signal (default SIGTERM); false if the process is already gone. */
  kill(signal?: NodeJS.Signals): boolean
  /** Sends `signal` (default SIGTERM), then SIGKILL after `killAfterMs` (default 5 s); resolves with the exit code. */
  stop(signal?: NodeJS.Signals, killAfterMs?: number): Promise<number | null>
  /** Prints the captured output to stderr under a header naming the service, and returns it. */
  dumpLogs(opts?: { lastLines?: number }): string
}

export interface SpawnServiceOptions {
  /** Used in log file names and messages. */
  name: string
  /** Absolute path of the compiled .js entry point, run as `node entry ...args`. */
  entry: string
  args?: string[]
  /** Environment of the child. Only PATH and HOME are inherited unless inheritEnv is true. */
  env?: Record<string, string>
  inheritEnv?: boolean
  cwd?: string
  /** Written to the child's stdin, which is then closed. Without it stdin stays open (child.stdin). */
  stdin?: string
  /**
   * A listening socket of the test's own (its file descriptor) handed to the
   * child as systemd's socket activation does: as fd 3, with LISTEN_FDS=1 and
   * LISTEN_PID set to the child's pid (a shell sets it, then execs node).
   */
  listenFd?: number
}

function hasPipes(child: ChildProcess): child is ChildProcessWithoutNullStreams {
  return child.stdin !== null && child.stdout !== null && child.stderr !== null
}

function tail(lines: readonly string[], n: number): string {
  return lines.slice(-n).join('\n')
}

/** Starts a compiled service as a child process of the test; see ServiceProcess. */
export function spawnService(opts: SpawnServiceOptions): ServiceProcess
/** Positional form: spawnService(name, entry, env, { stdin, cwd, args }). */
export function spawnService(name: string, entry: string, env?: Record<string, string>, opts?: Omit<SpawnServiceOptions, 'name' | 'entry' | 'env'>): ServiceProcess
export function spawnService(
  a: SpawnServiceOptions | string,
  entryArg?: string,
  envArg?: Record<string, string>,
  rest: Omit<SpawnServiceOptions, 'name' | 'entry' | 'env'> = {},
): ServiceProcess {
  const o: SpawnServiceOptions = typeof a === 'string' ? { ...rest, name: a, entry: entryArg ?? '', env: envArg ?? {} } : a
  if (!path.isAbsolute(o.entry)) throw new Error(`spawnService(${o.name}): entry must be an absolute path, got ${JSON.stringify(o.entry)}`)
  if (!existsSync(o.entry)) throw new Error(`spawnService(${o.name}): ${o.entry} does not exist (run \`npx tsc -b\` to build the services first)`)
  if (o.cwd !== undefined && !existsSync(o.cwd)) throw new Error(`spawnService(${o.name}): working directory ${o.cwd} does not exist`)

  const baseEnv: Record<string, string | undefined> = o.inheritEnv ? { ...process.env } : { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? os.tmpdir() }
  const child =
    o.listenFd === undefined
      ? spawn(process.execPath, [o.entry, ...(o.args ?? [])], { env: { ...baseEnv, ...o.env }, cwd: o.cwd ?? repoRoot, stdio: ['pipe', 'pipe', 'pipe'] })
      : spawn('/bin/sh', ['-c', 'LISTEN_PID=$$ LISTEN_FDS=1 exec "$0" "$@"', process.execPath, o.entry, ...(o.args ?? [])], {
          env: { ...baseEnv, ...o.env },
          cwd: o.cwd ?? repoRoot,
          stdio: ['pipe', 'pipe', 'pipe', o.listenFd],
        })
  killOnExit(child)
  // A failed spawn (bad cwd, ...) arrives as 'error' and then 'close'; keep it from crashing the test process.
  let spawnError: Error | undefined
  child.once('error', (err) => {
    spawnError = err
  })
  // @types/node types the pipes as possibly null when stdio has a fourth
  // entry (the listenFd form); Node leaves them null only when the spawn
  // failed before it could make them (EMFILE, ENFILE).
  if (!hasPipes(child)) throw new Error(`spawnService(${o.name}): the child has no stdio pipes (out of file descriptors?)`)
  child.stdin.on('error', () => {}) // EPIPE when the child exits before reading
  if (o.stdin !== undefined) child.stdin.end(o.stdin)

  mkdirSync(logDir, { recursive: true })
  const logFile = path.join(logDir, `${o.name.replace(/[^A-Za-z0-9_.-]/g, '_')}-${child.pid ?? 'nopid'}.log`)
  let logFd: number | null = openSync(logFile, 'a')

  const lines: string[] = []
  const stdoutLines: string[] = []
  const stderrLines: string[] = []
  const partial = { stdout: '', stderr: '' }
  const waiters = new Set<{ check(): void; fail(why: string): void }>()

  const addLine = (stream: 'stdout' | 'stderr', line: string) => {
    lines.push(line)
    ;(stream === 'stdout' ? stdoutLines : stderrLines).push(line)
    if (logFd !== null) writeSync(logFd, `${line}\n`)
    for (const w of waiters) w.check()
  }
  const onData = (stream: 'stdout' | 'stderr') => (chunk: Buffer) => {
    const parts = (partial[stream] + chunk.toString('utf8')).split('\n')
    partial[stream] = parts.pop() ?? ''
    for (const p of parts) addLine(stream, p.endsWith('\r') ? p.slice(0, -1) : p)
  }
  child.stdout.on('data', onData('stdout'))
  child.stderr.on('data', onData('stderr'))

  // 'close' fires after the exit and after both pipes have been drained.
  let status: ExitStatus | undefined
  const closed = new Promise<ExitStatus>((resolve) => {
    child.once('close', (code, signal) => {
      for (const stream of ['stdout', 'stderr'] as const) {
        if (partial[stream]) addLine(stream, partial[stream])
        partial[stream] = ''
      }
      if (spawnError) addLine('stderr', `[harness] spawn failed: ${spawnError.message}`)
      status = { code, signal }
      if (logFd !== null) {
        writeSync(logFd, `[harness] ${o.name} exited (code ${code}, signal ${signal})\n`)
        closeSync(logFd)
        logFd = null
      }
      for (const w of waiters) w.fail(signal ? `was killed by ${signal}` : `exited with code ${code}`)
      resolve(status)
    })
  })

  const isRunning = () => child.exitCode === null && child.signalCode === null && status === undefined

  const service: ServiceProcess = {
    name: o.name,
    pid: child.pid ?? -1,
    child,
    lines,
    stdoutLines,
    stderrLines,
    logFile,
    output: () => [...lines, ...(partial.stdout ? [partial.stdout] : []), ...(partial.stderr ? [partial.stderr] : [])].join('\n'),
    waitForExit: () => closed,
    exited: () => closed.then((s) => s.code),
    kill(signal = 'SIGTERM') {
      if (!isRunning()) return false
      return child.kill(signal)
    },
    waitForLine(re, timeoutMs = 15_000, { from = 0 } = {}) {
      return new Promise<string>((resolve, reject) => {
        let next = from
        let timer: NodeJS.Timeout | undefined
        const waiter = {
          check() {
            for (; next < lines.length; next++) {
              const line = lines[next]!
              re.lastIndex = 0
              if (re.test(line)) {
                done()
                resolve(line)
                return
              }
            }
          },
          fail(why: string) {
            done()
            reject(new Error(`${o.name} (pid ${service.pid}) ${why} before printing a line matching ${re}; last output:\n${tail(lines, 40)}`))
          },
        }
        const done = () => {
          waiters.delete(waiter)
          if (timer) clearTimeout(timer)
        }
        waiters.add(waiter)
        waiter.check()
        if (!waiters.has(waiter)) return
        if (status) return waiter.fail(status.signal ? `was killed by ${status.signal}` : `exited with code ${status.code}`)
        timer = setTimeout(() => {
          done()
          reject(new Error(`timed out after ${timeoutMs} ms waiting for ${o.name} (pid ${service.pid}) to print a line matching ${re}; last output:\n${tail(lines, 40)}`))
        }, timeoutMs)
      })
    },
    async stop(signal = 'SIGTERM', killAfterMs = 5_000) {
      if (isRunning()) {
        const force = setTimeout(() => {
          if (isRunning()) child.kill('SIGKILL')
        }, killAfterMs)
        child.kill(signal)
        await closed
        clearTimeout(force)
      }
      return (await closed).code
    },
    dumpLogs({ lastLines } = {}) {
      const shown = lastLines ? tail(lines, lastLines) : service.output()
      const state = status ? `exited: code ${status.code}, signal ${status.signal}` : 'running'
      const text = `----- ${o.name} (pid ${service.pid}, ${state}, log ${logFile}) -----\n${shown}\n----- end of ${o.name} -----\n`
      process.stderr.write(text)
      return text
    },
  }
  return service
}
