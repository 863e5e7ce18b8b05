import { execFileSync, spawn, type ChildProcess, type ChildProcessByStdio, type StdioOptions } from 'node:child_process'
import { accessSync, constants, readdirSync, readFileSync, statfsSync, statSync } from 'node:fs'
import path from 'node:path'
import type { Readable, Writable } from 'node:stream'
import { StringDecoder } from 'node:string_decoder'
import { fileURLToPath } from 'node:url'
import { SYSCALL_FILTER_FD, syscallFilter } from './syscallFilter.js'

const HARNESS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../sandbox/harness.mjs')

/** The end of a run's stderr it keeps (characters): the route answers with its last 2,000, the memory check reads it. */
const MAX_OUTPUT = 64 * 1024

/**
 * The most a run may write to its stderr or its result channel (bytes). The
 * gateway reads every byte of both; past this the run is stopped (error
 * crash, stderr saying why) instead of being read until its timeout (found by
 * review: with allowSpawn, `cat /dev/zero` kept the gateway reading for the
 * whole timeout). It is also the largest result a run can return.
 */
export const MAX_STREAM_BYTES = 16 * MAX_OUTPUT

/**
 * The deepest result a run may return (arrays and objects within each other).
 * A deeper one is refused (error crash, stderr saying why): serialising the
 * answer recurses once per level, and a result 5,000 deep overflowed the
 * stack, a 500 (found by review).
 */
export const MAX_RESULT_DEPTH = 64

/**
 * The harness writes the result, one JSON line, on this descriptor: a channel
 * of its own (spawn's 'pipe'), passed through bwrap. It used to be the last
 * line of stdout, where anything the skill printed could be taken for it,
 * also in a run that then crashed (found by review). The skill's stdout is
 * discarded. Child processes the skill starts do not inherit the descriptor
 * (Node gives them their stdio only); the skill's own node process could
 * write it with fs, which the scan refuses and which gives it nothing it
 * could not return, and what a failed run wrote there is dropped.
 */
export const RESULT_FD = 4

/** The result line's depth: the result's and the harness's `{"result": …}` around it. */
const MAX_RESULT_LINE_DEPTH = MAX_RESULT_DEPTH + 1

export interface SandboxLimits {
  memoryMb: number
  timeoutMs: number
  allowSpawn: boolean
  filesystem: boolean
}

export interface SandboxRun {
  /** The private per-run root (createRunRoot): the manifest's files only. */
  skillRoot: string
  entry: string
  input: unknown
  /** The gateway's per-run API socket, bound into the sandbox as /run/countersign.sock. */
  apiSocket: string
  limits: SandboxLimits
  bwrap?: string
  node?: string
}

export type SandboxFailure = 'timeout' | 'memory' | 'tasks' | 'crash'

export interface SandboxResult {
  exitCode: number | null
  /** What the harness wrote on RESULT_FD (resultOf reads it); empty when the run failed (`error`). */
  output: string
  durationMs: number
  error?: SandboxFailure
  stderr: string
}

/**
 * The flag that turns Node's permission model on: `--permission` from Node
 * 22.13 (stable), `--experimental-permission` before; Node 24 knows only the
 * former, Node 20 only the latter.
 */
export function permissionFlag(nodeVersion: string): '--permission' | '--experimental-permission' {
  const [major = 0, minor = 0] = nodeVersion.replace(/^v/, '').split('.').map(Number)
  return major > 22 || (major === 22 && minor >= 13) ? '--permission' : '--experimental-permission'
}

/** The version of another Node binary than the one running (`node --version`). */
function nodeVersionOf(node: string): string {
  return execFileSync(node, ['--version'], { encoding: 'utf8', timeout: 10_000 }).trim()
}

const SYSTEM_DIRS = ['/usr', '/lib', '/lib64', '/bin']

/**
 * A Node outside the system directories (e.g. an LTS unpacked elsewhere) is
 * bound read-only at its own path; placed after sandboxArgs' /tmp tmpfs,
 * which would otherwise hide one that lives under /tmp.
 */
export function nodeBind(node: string): string[] {
  return SYSTEM_DIRS.some((d) => node.startsWith(`${d}/`)) ? [] : ['--ro-bind', node, node]
}

/** The sandbox's /tmp: a tmpfs of at most `bytes`, writable only when `writable`. */
export interface TmpMount {
  bytes: number
  writable: boolean
}

const MIB = 1024 * 1024

/** The start-up probe writes nothing: a small read-only /tmp, mounted as a run's is. */
export const PROBE_TMP: TmpMount = { bytes: MIB, writable: false }

/**
 * A run's /tmp holds at most its memory budget (memoryMb): tmpfs pages are
 * memory that no process's resident size shows. Writable only with the
 * filesystem permission: Node's permission model does not bind the child
 * processes allowSpawn lets a skill start, the mount does.
 */
export function tmpMountFor(limits: SandboxLimits): TmpMount {
  return { bytes: Math.max(MIB, Math.floor(limits.memoryMb * MIB)), writable: limits.filesystem }
}

/**
 * The sandbox, in two layers. bubblewrap: new user, PID, IPC, UTS, cgroup and
 * network namespaces (the network one has no route out), only /usr, /lib*,
 * the skill root (read-only) and the API socket visible, an empty tmpfs /tmp
 * no larger than the memory budget, nothing else writable, no data dir and no
 * keys; killed with the gateway. Node's permission model inside: reads only
 * under /skill and the harness, writes nowhere (or only /tmp when the
 * manifest asks for filesystem), no child processes unless allowSpawn, no
 * worker threads, no native addons. Memory: V8's heap limit plus the
 * resident size and /tmp watched from outside; time: killed at timeoutMs.
 */
export function bwrapArgs(run: SandboxRun): string[] {
  const node = run.node ?? process.execPath
  const permission = [
    permissionFlag(run.node === undefined ? process.versions.node : nodeVersionOf(node)),
    '--allow-fs-read=/skill',
    '--allow-fs-read=/countersign',
    ...(run.limits.filesystem ? ['--allow-fs-write=/tmp'] : []),
    ...(run.limits.allowSpawn ? ['--allow-child-process'] : []),
  ]
  // eval and the Function constructor throw, however they were reached: a function prototype's keys walked at
  // run time gave the scan nothing to see (found by review).
  const noCodeFromStrings = '--disallow-code-generation-from-strings'
  return [
    ...sandboxArgs(tmpMountFor(run.limits), [
      ...nodeBind(node),
      '--ro-bind', run.skillRoot, '/skill',
      '--ro-bind', HARNESS, '/countersign/harness.mjs',
      '--bind', run.apiSocket, '/run/countersign.sock',
    ]),
    '--chdir', '/skill',
    node,
    ...permission,
    noCodeFromStrings,
    '--no-warnings',
    `--max-old-space-size=${Math.max(8, Math.floor(run.limits.memoryMb))}`,
    '/countersign/harness.mjs',
    `/skill/${run.entry}`,
    JSON.stringify(run.input ?? null),
  ]
}

/**
 * What every sandbox has, the start-up probe's included: the system's
 * read-only binaries and libraries, a minimal /dev and an empty /tmp of
 * `tmp.bytes`, then `binds`, every namespace new (no network), killed with
 * the gateway, no environment. No /proc: node does not need it, the skill has
 * no business reading it, and a fresh proc mount is what a hardened systemd
 * unit (ProtectKernelTunables=, ProcSubset=) forbids inside a user namespace.
 * Nothing is writable but a writable /tmp: bwrap's root and /dev are tmpfs
 * mounts of their own, unbounded (/dev/shm is a directory of /dev's), so they
 * are remounted read-only once everything is mounted on them (a mount point
 * cannot be made afterwards); device nodes such as /dev/null still work.
 * The command runs under the system-call filter (syscallFilter.ts) that
 * spawnSandbox hands bwrap on fd 3.
 * `--size` needs bubblewrap 0.5 or later: an older one fails the probe.
 */
export function sandboxArgs(tmp: TmpMount, binds: string[]): string[] {
  return [
    ...SYSTEM_DIRS.flatMap((d) => ['--ro-bind-try', d, d]),
    '--ro-bind-try', '/etc/ld.so.cache', '/etc/ld.so.cache',
    '--size', String(tmp.bytes), '--tmpfs', '/tmp',
    '--dev', '/dev',
    ...binds,
    ...(tmp.writable ? [] : ['--remount-ro', '/tmp']),
    '--remount-ro', '/dev',
    '--remount-ro', '/',
    '--unshare-all',
    '--die-with-parent',
    '--new-session',
    '--clearenv',
    '--setenv', 'PATH', '/usr/bin:/bin',
    '--seccomp', String(SYSCALL_FILTER_FD),
  ]
}

/**
 * The niceness of a skill run: bwrap and every process and thread it starts.
 * A run may keep every core busy until its timeout (SERVICE_SKILL_CONCURRENCY
 * runs at once); at 19 the scheduler gives the services' threads ~70 times
 * its share whenever both want a core, so signing and approvals do not wait
 * behind a skill. Lowering one's own priority needs no privilege and cannot
 * be undone inside the sandbox (RLIMIT_NICE, no CAP_SYS_NICE).
 */
export const SANDBOX_NICENESS = 19

/** A program spawnSandbox needs (bwrap, or coreutils' nice) that is not there. */
export class ProgramNotFoundError extends Error {
  constructor(readonly program: string) {
    super(`${program.includes('/') ? `${program} is not an executable file` : `${program} not found on PATH`}${program === 'nice' ? ' (coreutils, which every skill run goes through)' : program === 'prlimit' ? ' (util-linux, which every skill run goes through)' : ''}`)
    this.name = 'ProgramNotFoundError'
  }
}

/** Where programs are looked for without PATH, as libuv's spawn and execvp do (found by review: unset PATH found nothing). */
const DEFAULT_SEARCH_PATH = '/usr/local/bin:/usr/bin:/bin'

/** Where `program` is: itself when it names a path, else the first executable of that name on PATH. */
export function programPath(program: string, searchPath = process.env.PATH ?? DEFAULT_SEARCH_PATH): string {
  const executable = (file: string) => {
    try {
      accessSync(file, constants.X_OK)
      return statSync(file).isFile()
    } catch {
      return false
    }
  }
  if (program.includes('/')) {
    if (executable(program)) return program
    throw new ProgramNotFoundError(program)
  }
  for (const dir of searchPath.split(':')) {
    if (dir && executable(path.join(dir, program))) return path.join(dir, program)
  }
  throw new ProgramNotFoundError(program)
}

/**
 * The most file descriptors any process of a run may hold (RLIMIT_NOFILE,
 * soft and hard; node alone opens about a dozen). Memory a run holds in
 * kernel buffers (AF_UNIX socket pairs written and never read, pipes) shows
 * in no process's resident memory; the filter refuses every other socket
 * family, and this bounds how many of those buffers a process can hold
 * (node otherwise raises its own limit to the hard one, 20,000 and more).
 */
export const SANDBOX_MAX_FILES = 64

/**
 * What spawnSandbox runs: util-linux's prlimit, which sets the run's file
 * limit and executes coreutils' nice, which lowers its priority and executes
 * bwrap with `args`. All three are found first, so that a missing one is
 * named (each would otherwise report the next one missing as its own exit 127).
 */
export function sandboxCommand(bwrap: string, args: string[]): [string, string[]] {
  const bwrapPath = programPath(bwrap)
  const nice = programPath('nice')
  return [programPath('prlimit'), [`--nofile=${SANDBOX_MAX_FILES}:${SANDBOX_MAX_FILES}`, nice, '-n', String(SANDBOX_NICENESS), bwrapPath, ...args]]
}

/**
 * bwrap started with `args` (which hold sandboxArgs' `--seccomp 3`) and the
 * system-call filter written to its fd 3, at SANDBOX_NICENESS, stdout and
 * stderr piped (the start-up probe reads its answer on stdout). Throws
 * NoSyscallFilterError where this machine's architecture has no filter
 * (nothing runs unfiltered), ProgramNotFoundError without bwrap or nice.
 */
export function spawnSandbox(bwrap: string, args: string[]): ChildProcessByStdio<null, Readable, Readable> {
  return startSandbox(bwrap, args, ['ignore', 'pipe', 'pipe', 'pipe']) as unknown as ChildProcessByStdio<null, Readable, Readable>
}

/** A skill run's sandbox, as spawnSandbox's: stdout discarded, stderr piped, the result channel on RESULT_FD. */
function spawnRun(bwrap: string, args: string[]): { child: ChildProcess; stderr: Readable; result: Readable } {
  const child = startSandbox(bwrap, args, ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'])
  return { child, stderr: child.stdio[2] as Readable, result: child.stdio[RESULT_FD] as Readable }
}

function startSandbox(bwrap: string, args: string[], stdio: StdioOptions): ChildProcess {
  const filter = syscallFilter()
  const [file, argv] = sandboxCommand(bwrap, args)
  const child = spawn(file, argv, { stdio })
  const filterPipe = child.stdio[SYSCALL_FILTER_FD] as Writable
  // A bwrap that failed to start, or exited before reading, closes the pipe: its own exit reports that.
  filterPipe.on('error', () => undefined)
  filterPipe.end(filter)
  return child
}

/** The children of every thread of `pid`: a process started from a thread other than the main one is listed only under that thread (found by review: such a child held 400 MB unseen). */
function childrenOf(pid: number): number[] {
  let tasks: string[]
  try {
    tasks = readdirSync(`/proc/${pid}/task`)
  } catch {
    return []
  }
  const children: number[] = []
  for (const task of tasks) {
    try {
      for (const child of readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim().split(/\s+/)) if (child) children.push(Number(child))
    } catch {
      /* the thread is gone */
    }
  }
  return children
}

function descendants(pid: number): number[] {
  return [pid, ...childrenOf(pid).flatMap(descendants)]
}

/**
 * What the run's /tmp holds, in KiB, read (statfs) through the root of a
 * process inside the sandbox. Only below bwrap's own two processes: the
 * outer one stays in the gateway's mount namespace, and the inner one forks
 * the command only once the sandbox's root is in place (before, its /tmp is
 * the host's). A filesystem larger than the run's /tmp is not it either.
 * 0 while there is no such process.
 */
function tmpUsedKb(bwrapPid: number, tmp: TmpMount): number {
  const inside = childrenOf(bwrapPid).flatMap(childrenOf)[0]
  if (inside === undefined) return 0
  try {
    const fs = statfsSync(`/proc/${inside}/root/tmp`)
    if (fs.blocks * fs.bsize > tmp.bytes + fs.bsize) return 0
    return ((fs.blocks - fs.bfree) * fs.bsize) / 1024
  } catch {
    return 0
  }
}

/** The resident memory (KiB) and the tasks (threads of every process) of `pids`. */
function usageOf(pids: number[]): { residentKb: number; tasks: number } {
  let residentKb = 0
  let tasks = 0
  for (const pid of pids) {
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8')
      residentKb += Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0)
      tasks += Number(/Threads:\s+(\d+)/.exec(status)?.[1] ?? 1)
    } catch {
      /* gone */
    }
  }
  return { residentKb, tasks }
}

/**
 * One of a run's streams as it arrives: decoded as UTF-8 across reads (each
 * read was decoded on its own, and a character split between two came back
 * as U+FFFD, found by review), keeping its last `keep` characters. `over` is
 * called once, when the stream has brought more than MAX_STREAM_BYTES; it is
 * not read any further.
 */
function readStream(stream: Readable, keep: number, over: () => void): () => string {
  const decoder = new StringDecoder('utf8')
  let text = ''
  let bytes = 0
  stream.on('data', (chunk: Buffer) => {
    bytes += chunk.length
    if (bytes > MAX_STREAM_BYTES) {
      stream.destroy()
      over()
      return
    }
    text += decoder.write(chunk)
    if (text.length > 2 * keep) text = text.slice(-keep)
  })
  return () => (text + decoder.end()).slice(-keep)
}

/** Why a run's result line is refused (too deep to serialise), or null. */
function resultRefusal(output: string): string | null {
  if (nestingDepth(output) <= MAX_RESULT_LINE_DEPTH) return null
  return `countersign: the result is nested more than ${MAX_RESULT_DEPTH} levels deep (arrays and objects); it was not returned`
}

export function runSandboxed(run: SandboxRun): Promise<SandboxResult> {
  const started = performance.now()
  let spawned: ReturnType<typeof spawnRun>
  try {
    spawned = spawnRun(run.bwrap ?? 'bwrap', bwrapArgs(run))
  } catch (err) {
    return Promise.resolve({ exitCode: null, output: '', durationMs: 0, error: 'crash', stderr: `cannot start the sandbox: ${(err as Error).message}` })
  }
  const { child } = spawned
  let failure: SandboxFailure | undefined
  // What the gateway says about the run, after the run's own stderr.
  const notes: string[] = []
  const kill = (why: SandboxFailure, note?: string) => {
    if (!failure && note) notes.push(note)
    failure ??= why
    child.kill('SIGKILL')
  }
  const tooMuch = (what: string) => () => kill('crash', `countersign: the run wrote more than ${MAX_STREAM_BYTES} bytes ${what}; it was stopped`)
  const stderr = readStream(spawned.stderr, MAX_OUTPUT, tooMuch('to stderr'))
  const result = readStream(spawned.result, MAX_STREAM_BYTES, tooMuch('as its result'))
  const timer = setTimeout(() => kill('timeout'), run.limits.timeoutMs)
  // The node runtime itself needs 40-55 MB resident (Node 24's harness with child_process loaded is near the
  // top: with 48 MB, a run whose /tmp was full was killed for memory at random, not refused a write); the limit
  // applies on top of it. What /tmp holds counts too (its own size limit stops a write that outruns this watch).
  const ceilingKb = (run.limits.memoryMb + RUNTIME_ALLOWANCE_MB) * 1024
  const tmp = tmpMountFor(run.limits)
  const watch = setInterval(() => {
    if (!child.pid) return
    const usage = usageOf(descendants(child.pid))
    if (usage.residentKb + tmpUsedKb(child.pid, tmp) > ceilingKb) kill('memory')
    else if (usage.tasks > MAX_RUN_TASKS) kill('tasks')
  }, 25)
  return new Promise((resolve) => {
    child.once('error', (err) => {
      clearTimeout(timer)
      clearInterval(watch)
      resolve({ exitCode: null, output: '', durationMs: performance.now() - started, error: 'crash', stderr: `cannot start the sandbox: ${err.message}` })
    })
    child.once('close', (code) => {
      clearTimeout(timer)
      clearInterval(watch)
      const logs = stderr()
      if (!failure && /heap limit|JavaScript heap out of memory|Allocation failed/.test(logs)) failure = 'memory'
      if (!failure && code !== 0) failure = 'crash'
      // Only a run that ended well has a result: what a failed one wrote there is not it.
      let output = failure ? '' : result()
      const refused = output ? resultRefusal(output) : null
      if (refused) {
        failure = 'crash'
        notes.push(refused)
        output = ''
      }
      resolve({
        exitCode: code,
        output,
        durationMs: Math.round(performance.now() - started),
        stderr: [logs, ...notes].filter(Boolean).join('\n'),
        ...(failure ? { error: failure } : {}),
      })
    })
  })
}

/**
 * How deeply `json` nests arrays and objects, counted over the text without
 * parsing it (parsing or serialising a deep one is what recurses).
 */
export function nestingDepth(json: string): number {
  let depth = 0
  let deepest = 0
  let inString = false
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i)
    if (inString) {
      if (c === 0x5c) i++ // a backslash: the next character is escaped
      else if (c === 0x22) inString = false
    } else if (c === 0x22) inString = true
    else if (c === 0x5b || c === 0x7b) deepest = Math.max(deepest, ++depth)
    else if (c === 0x5d || c === 0x7d) depth--
  }
  return deepest
}

/** Resident memory the runtime itself may use on top of the manifest's memoryMb (docs/skills.md "Limits"). */
export const RUNTIME_ALLOWANCE_MB = 64

/**
 * Tasks (threads of all its processes, bwrap's two included) a run may hold
 * before it is killed (error `tasks`). A run is about a dozen (node and its
 * threads); with allowSpawn a skill started 3,000 threads, and the gateway's
 * unit gives the whole service TasksMax=128 (found by review). The watch
 * samples every 25 ms, so a burst between two looks is stopped at the next.
 */
export const MAX_RUN_TASKS = 40

/** The skill's result: the JSON line the harness wrote on RESULT_FD (SandboxResult.output); null when there is none. */
export function resultOf(output: string): unknown {
  const last = output.trim().split('\n').pop() ?? ''
  // runSandboxed refuses a deeper one; any other caller gets nothing rather than a value no answer can carry.
  if (nestingDepth(last) > MAX_RESULT_LINE_DEPTH) return null
  try {
    return (JSON.parse(last) as { result?: unknown }).result ?? null
  } catch {
    return null
  }
}
