// Helpers for the benchmarks: start a real service as a child process, wait for
// it to listen, drive it with autocannon, and report figures as ratios against
// a ceiling measured in the same run.
import { spawn } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import autocannon from 'autocannon'

export const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..')

export function tempDir(prefix = 'cs-bench-') {
  return mkdtempSync(path.join(os.tmpdir(), prefix))
}

export async function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address()
      srv.close(() => resolve(port))
    })
  })
}

/** Spawns `node entry` and resolves once `url` answers; returns a stop function. */
export async function startNode(entry, { env = {}, url, args = [] }) {
  const child = spawn(process.execPath, [entry, ...args], {
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
  return {
    pid: child.pid,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve()
        child.once('exit', () => resolve())
        child.kill('SIGTERM')
      }),
  }
}

/** Runs autocannon and returns {rps, p50, p99, errors, non2xx}. */
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

export function ratio(a, b) {
  return b === 0 ? 0 : a / b
}

export function fmt(n, digits = 0) {
  return Number(n).toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
}
