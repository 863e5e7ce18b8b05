// Helpers for the benchmarks: start a real service as a child process, wait for
// it to listen, drive it with autocannon, and report figures as ratios against
// a ceiling measured in the same run.
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'

// fileURLToPath, not the URL's pathname: that keeps %20 and the like, so a checkout under a
// folder with a space or a non-ASCII name found no services/*/dist.
export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

/**
 * A fresh directory under the system's temp dir.
 * @param {string} [prefix]
 * @returns {string}
 */
export function tempDir(prefix = 'cs-bench-') {
  return mkdtempSync(path.join(os.tmpdir(), prefix))
}

/**
 * A TCP port on 127.0.0.1 that was free a moment ago.
 * @returns {Promise<number>}
 */
export async function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      // Listening on TCP: the address is an AddressInfo, not a pipe's name.
      const { port } = /** @type {net.AddressInfo} */ (srv.address())
      srv.close(() => resolve(port))
    })
  })
}

/**
 * @typedef {object} Stoppable a service this benchmark started
 * @property {number | undefined} pid
 * @property {() => Promise<void>} stop sends SIGTERM, resolves once it exited
 */

/**
 * Spawns `node entry` and resolves once `url` answers; returns a stop function.
 * @param {string} entry
 * @param {{ env?: Record<string, string>, url: string, args?: string[], nodeArgs?: string[] }} opts
 * @returns {Promise<Stoppable>}
 */
export async function startNode(entry, { env = {}, url, args = [], nodeArgs = [] }) {
  const child = spawn(process.execPath, [...nodeArgs, entry, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let stderr = ''
  child.stderr.on('data', (d) => (stderr += d))
  const deadline = Date.now() + 15_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${entry} exited: ${stderr}`)
    try {
      const r = await fetch(url)
      if (r.status < 500) break
    } catch {}
    if (Date.now() > deadline) throw new Error(`${entry} did not start: ${stderr}`)
    await new Promise((r) => setTimeout(r, 50))
  }
  return stoppable(child)
}

/**
 * Spawns `node entry` and resolves once its stderr matches `ready` (services that say so before they listen on TCP, or never do); killed when the benchmark exits.
 * @param {string} entry
 * @param {Record<string, string>} env
 * @param {RegExp} ready
 * @param {string[]} [nodeArgs]
 * @returns {Promise<Stoppable>}
 */
export async function spawnReady(entry, env, ready, nodeArgs = []) {
  const child = spawn(process.execPath, [...nodeArgs, entry], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] })
  process.setMaxListeners(0) // one exit listener per child; a benchmark starts many
  process.once('exit', () => child.kill('SIGKILL'))
  /** @type {Promise<void>} */
  const started = new Promise((resolve, reject) => {
    let err = ''
    child.stderr.on('data', (d) => {
      err += d
      if (ready.test(err)) resolve()
    })
    child.once('exit', (c) => reject(new Error(`${entry} exited ${c}: ${err}`)))
  })
  await started
  return stoppable(child)
}

/**
 * The child's pid, and a stop that sends SIGTERM and resolves on exit (a --cpu-prof child writes its profile on the way out).
 * @param {import('node:child_process').ChildProcess} child
 * @returns {Stoppable}
 */
function stoppable(child) {
  return {
    pid: child.pid,
    stop: () =>
      new Promise((/** @type {() => void} */ resolve) => {
        if (child.exitCode !== null) return resolve()
        child.once('exit', () => resolve())
        child.kill('SIGTERM')
      }),
  }
}

/**
 * BENCH_CPU_PROF=dir: the node flags that make service `name` write CPU
 * profiles (node --cpu-prof) into a folder `name-<ms>` of dir when it exits,
 * a file per thread (node's own names, CPU.<date>.<time>.<pid>.<thread>.<seq>:
 * thread 0 is the event loop); none without it. A fixed --cpu-prof-name made
 * each worker thread's profile overwrite the one before.
 * @param {string} name
 * @returns {string[]}
 */
export function profileArgs(name) {
  const dir = process.env.BENCH_CPU_PROF
  return dir ? ['--cpu-prof', `--cpu-prof-dir=${path.join(dir, `${name}-${Date.now()}`)}`] : []
}

/**
 * @typedef {object} LoadResult
 * @property {number} rps mean requests per second
 * @property {number} p50 latency, ms
 * @property {number} p99 latency, ms
 * @property {number} errors connection errors and timeouts
 * @property {number} non2xx
 * @property {number} total requests completed
 */

/**
 * Runs autocannon (32 connections for 8 s unless `opts` says otherwise).
 * @param {import('autocannon').Options} opts
 * @returns {Promise<LoadResult>}
 */
export async function load(opts) {
  const result = await autocannon({ connections: 32, duration: 8, ...opts })
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors,
    non2xx: result.non2xx,
    total: result.requests.total,
  }
}

/**
 * list[i], which the caller knows is there (a worker's wallet, a key by index).
 * @template T
 * @param {readonly T[]} list
 * @param {number} i
 * @returns {T}
 */
export function nth(list, i) {
  const item = list[i]
  if (item === undefined) throw new RangeError(`no item ${i} in a list of ${list.length}`)
  return item
}

/**
 * a / b, 0 when b is 0.
 * @param {number} a
 * @param {number} b
 */
export function ratio(a, b) {
  return b === 0 ? 0 : a / b
}

/**
 * `n` for a report line: en-US digit groups, `digits` decimals (NaN for nothing).
 * @param {number | null | undefined} n
 * @param {number} [digits]
 */
export function fmt(n, digits = 0) {
  return Number(n).toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
}

/**
 * CPU time used so far by each thread of a process, in ms, read from
 * /proc/<pid>/task (Linux only; null elsewhere). The thread whose id is the
 * pid is the event loop; the others are worker threads, GC and libuv helpers.
 * @param {number | null | undefined} pid
 * @returns {Map<number, number> | null} thread id -> ms
 */
export function threadCpuMs(pid) {
  const dir = `/proc/${pid}/task`
  if (!existsSync(dir)) return null
  const ticksPerMs = 100 / 1000 // USER_HZ is 100 on Linux
  const threads = new Map()
  for (const tid of readdirSync(dir)) {
    try {
      const stat = readFileSync(`${dir}/${tid}/stat`, 'utf8')
      // Fields after the parenthesised command name; utime and stime are the 14th and 15th.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      threads.set(Number(tid), (Number(fields[11]) + Number(fields[12])) / ticksPerMs)
    } catch {}
  }
  return threads
}

/**
 * @typedef {{ loopUs: number, othersUs: number }} CpuPerRequest
 */

/**
 * CPU µs per request between two threadCpuMs readings: the event loop and all other threads.
 * @param {number | null | undefined} pid
 * @param {Map<number, number> | null} before
 * @param {Map<number, number> | null} after
 * @param {number} requests
 * @returns {CpuPerRequest | null} null without readings or requests
 */
export function cpuPerRequest(pid, before, after, requests) {
  if (!before || !after || requests === 0) return null
  let loop = 0
  let others = 0
  for (const [tid, ms] of after) {
    const used = ms - (before.get(tid) ?? 0)
    if (tid === pid) loop += used
    else others += used
  }
  return { loopUs: (loop * 1000) / requests, othersUs: (others * 1000) / requests }
}
