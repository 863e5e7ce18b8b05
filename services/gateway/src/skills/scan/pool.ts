// Worker pool for the skill static analysis. The main thread never parses:
// it only measures sizes, hands each file to a piscina worker, and turns
// every failure into a finding, so a hostile file can cost at most the time
// limit and the worker's memory limit, never the event loop.
//
// Timing: each task's clock starts when the worker reports it has started
// (a MessagePort in the task), so waiting in the queue or for a replacement
// thread does not count. The worker stops itself cooperatively at
// `timeoutMs`; if it is stuck in the parser, the task's AbortSignal fires a
// little later and piscina terminates that thread and starts a new one. An
// overall AbortSignal.timeout also covers a worker that never starts.

import { MessageChannel } from 'node:worker_threads'
import { fileURLToPath } from 'node:url'
import { Piscina } from 'piscina'
import { DEFAULT_LIMITS, formatFinding, type ScanLimits } from './rules.js'
import type { ScanTask } from './worker.js'
import type { ModuleRequest } from './moduleRequests.js'

function isModuleRequest(r: unknown): r is ModuleRequest {
  const m = r as ModuleRequest | null
  return typeof m === 'object' && m !== null && (m.kind === 'import' || m.kind === 'require') && typeof m.specifier === 'string'
}

export interface ScanPoolOptions {
  /** Worker threads (default 2). */
  maxThreads?: number
  /** Per-file analysis time limit in ms (default 2000). */
  timeoutMs?: number
  /** Per-file size limit in bytes (default 512 KiB). */
  maxBytes?: number
  /** V8 old-generation heap per worker in MB (default 128). */
  maxOldGenerationSizeMb?: number
  /** Extra time allowed for a worker to start before the task is given up (default 10000). */
  startupGraceMs?: number
  /**
   * How long after `timeoutMs` a worker that has not stopped by itself (stuck
   * in the parser) is terminated and replaced (default 250).
   */
  hardStopSlackMs?: number
  /**
   * Called with worker errors that belong to no task (a worker dying while
   * idle). Errors of a task always become findings. Default: ignored.
   */
  onError?: (err: unknown) => void
}

export interface ScanFile {
  path: string
  source: string
}

/** One file's result: its findings and the modules it asks for. */
export interface FileReport {
  path: string
  findings: string[]
  requests: ModuleRequest[]
}

export interface ScanPool {
  /** Findings for all files, in file order; empty when every file passes. */
  scan(files: ReadonlyArray<ScanFile>): Promise<string[]>
  /** Per file, in file order: findings and module requests. */
  analyse(files: ReadonlyArray<ScanFile>): Promise<FileReport[]>
  close(): Promise<void>
}

/**
 * The compiled worker. From dist (production) it sits next to this file;
 * when tests import the TypeScript source, it is the dist build of the same
 * module (tests run after `tsc -b`).
 */
export function scanWorkerPath(): string {
  const here = import.meta.url
  const url = here.endsWith('.ts')
    ? new URL('../../../dist/skills/scan/worker.js', here)
    : new URL('./worker.js', here)
  return fileURLToPath(url)
}

export function createScanPool(options: ScanPoolOptions = {}): ScanPool {
  const maxThreads = Math.max(1, options.maxThreads ?? 2)
  const limits: ScanLimits = {
    timeoutMs: options.timeoutMs ?? DEFAULT_LIMITS.timeoutMs,
    maxBytes: options.maxBytes ?? DEFAULT_LIMITS.maxBytes,
  }
  const startupGraceMs = options.startupGraceMs ?? 10_000
  const hardStopSlackMs = options.hardStopSlackMs ?? 250
  const piscina = new Piscina({
    filename: scanWorkerPath(),
    minThreads: 0,
    maxThreads,
    idleTimeout: 30_000,
    concurrentTasksPerWorker: 1,
    resourceLimits: {
      maxOldGenerationSizeMb: options.maxOldGenerationSizeMb ?? 128,
      maxYoungGenerationSizeMb: 32,
      stackSizeMb: 4,
    },
  })

  // Piscina emits 'error' for failures outside any task; an EventEmitter
  // without a listener would throw them at the gateway.
  piscina.on('error', (err: unknown) => options.onError?.(err))

  // At most maxThreads tasks are handed to piscina at a time, so the
  // overall timeout of a task never includes time spent queued behind
  // other files.
  let free = maxThreads
  const waiting: Array<() => void> = []
  const acquire = (): Promise<void> => {
    if (free > 0) {
      free--
      return Promise.resolve()
    }
    return new Promise((resolve) => waiting.push(resolve))
  }
  const release = (): void => {
    const next = waiting.shift()
    if (next) next()
    else free++
  }

  let closed = false

  async function runTask(file: ScanFile): Promise<FileReport> {
    const failed = (finding: string): FileReport => ({ path: file.path, findings: [finding], requests: [] })
    const { port1, port2 } = new MessageChannel()
    const stop = new AbortController()
    let timer: NodeJS.Timeout | undefined
    port1.once('message', () => {
      timer = setTimeout(() => stop.abort(new Error('scan timeout')), limits.timeoutMs + hardStopSlackMs)
    })
    const signal = AbortSignal.any([
      stop.signal,
      AbortSignal.timeout(limits.timeoutMs + hardStopSlackMs + startupGraceMs),
    ])
    const task: ScanTask = { file: file.path, source: file.source, limits, started: port2 }
    try {
      const result = (await piscina.run(task, { signal, transferList: [port2] })) as { findings?: unknown; requests?: unknown } | null
      const findings = result?.findings
      const requests = result?.requests
      if (!Array.isArray(findings) || !findings.every((f): f is string => typeof f === 'string') || !Array.isArray(requests) || !requests.every(isModuleRequest)) {
        return failed(formatFinding(file.path, 1, 'scan_error', 'the analyser returned an invalid result'))
      }
      return { path: file.path, findings, requests }
    } catch (err) {
      if (signal.aborted) {
        return failed(formatFinding(file.path, 1, 'timeout', `analysis exceeded the ${limits.timeoutMs} ms limit`))
      }
      const code = (err as { code?: unknown } | null)?.code
      if (code === 'ERR_WORKER_OUT_OF_MEMORY') {
        return failed(formatFinding(file.path, 1, 'too_large', 'analysis exceeded the analyser memory limit'))
      }
      const message = err instanceof Error ? err.message : String(err)
      return failed(formatFinding(file.path, 1, 'scan_error', `analyser failure: ${message}`))
    } finally {
      clearTimeout(timer)
      port1.close()
    }
  }

  async function scanOne(file: ScanFile): Promise<FileReport> {
    const bytes = Buffer.byteLength(file.source, 'utf8')
    if (bytes > limits.maxBytes) {
      return { path: file.path, findings: [formatFinding(file.path, 1, 'too_large', `${bytes} bytes exceeds the ${limits.maxBytes}-byte limit; not parsed`)], requests: [] }
    }
    await acquire()
    try {
      if (closed) return { path: file.path, findings: [formatFinding(file.path, 1, 'scan_error', 'the scan pool is closed')], requests: [] }
      return await runTask(file)
    } finally {
      release()
    }
  }

  return {
    async scan(files) {
      if (closed) throw new Error('scan pool is closed')
      const perFile = await Promise.all(files.map((f) => scanOne(f)))
      return perFile.flatMap((r) => r.findings)
    },
    async analyse(files) {
      if (closed) throw new Error('scan pool is closed')
      return Promise.all(files.map((f) => scanOne(f)))
    },
    async close() {
      if (closed) return
      closed = true
      await piscina.destroy()
    },
  }
}
