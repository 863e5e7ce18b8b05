// SQLite's WAL checkpoints (copying the -wal file's frames into the main
// database file; not the audit log's signed checkpoints) on a thread of their
// own. SQLite runs its automatic checkpoint inside the commit that takes the
// -wal file past 1,000 pages, on the committing thread: it copies those pages
// and fsyncs both files, for milliseconds in which that thread does nothing
// else. In a loop of small commits (an upsert of sent_txs' shape, 40,000
// commits) 93 commits took over 1 ms and held 46 % of all commit time; in the
// signer that thread is the event loop, which meanwhile signs nothing.
//
// Here a worker thread with a connection of its own runs
// PRAGMA wal_checkpoint(PASSIVE) every `everyMs`. PASSIVE copies what no
// reader still needs and never waits for the writer. The connection is
// synchronous=FULL, so the checkpoint fsyncs the main file before it marks
// the frames copied, and the writer restarts the -wal file only over frames
// marked copied (SQLite's rule, whichever connection checkpoints): nothing a
// commit made durable is lost. The writer's own automatic checkpoint stays,
// at `backstopPages`. Under a steady stream of commits this thread never
// finds the -wal with nothing left to copy (commits land during its two
// fsyncs), so the -wal restarts at that backstop, whose checkpoint then has
// little left to copy: the writer pays one in-commit checkpoint (two fsyncs)
// where it paid ten (bench/RESULTS.md, 2026-12-07). It is also what bounds
// the -wal if this thread fails.
import { Worker } from 'node:worker_threads'
import { workerScriptBeside } from './workerScript.js'
import Database from 'better-sqlite3'

export interface WalCheckpointsOptions {
  /** How often the thread checkpoints (default 200 ms); a checkpoint with nothing to copy costs a read of the -wal index. */
  everyMs?: number
  /** The writer connection's own automatic checkpoint, in pages (default 10,000: 40 MB of -wal with 4 KiB pages). */
  backstopPages?: number
  /** A checkpoint that failed for another reason than a checkpoint already running elsewhere. */
  onError?: (err: Error) => void
}

export interface WalCheckpointStats {
  /** Checkpoints run (including those with nothing to copy). */
  runs: number
  /** Runs that copied frames into the main file. */
  copied: number
  /** Runs that found another connection checkpointing (SQLITE_BUSY): skipped, tried again next time. */
  busy: number
  /** Runs that failed otherwise (onError was told). */
  failed: number
}

export interface WalCheckpoints {
  /** Read from counters the thread keeps in shared memory: asking wakes nobody. */
  stats(): WalCheckpointStats
  /** Stops the thread and closes its connection; the writer's own checkpoint is back at SQLite's default. */
  close(): Promise<void>
}

/** Indexes into the shared counters (Int32Array). */
export const WAL_CHECKPOINT_COUNTERS = { runs: 0, copied: 1, busy: 2, failed: 3 } as const

/** What a service logs when its checkpoint thread reports a failure (nothing is lost: the writer checkpoints itself at the backstop). */
export const WAL_CHECKPOINT_FAILED_MESSAGE = 'SQLite WAL checkpoint on its own thread failed; the writing connection checkpoints itself once its -wal file reaches 10,000 pages'

export const DEFAULT_WAL_CHECKPOINT_MS = 200
export const DEFAULT_WAL_BACKSTOP_PAGES = 10_000
const SQLITE_DEFAULT_AUTOCHECKPOINT = 1000

export interface WalCheckpointWorkerData {
  file: string
  everyMs: number
  counters: SharedArrayBuffer
}

/** A failure the thread reports (posted only then: a run that went well wakes nobody). */
export interface WalCheckpointFailure {
  error: string
  code?: string
  /** An I/O error: the thread has stopped for good (walCheckpointWorker.ts says why). */
  stopped?: true
}

/**
 * The thread's connection. synchronous=FULL: the checkpoint fsyncs the main file before it marks the
 * frames copied (and the -wal before it copies), so the writer never restarts
 * the -wal file over frames that are not yet on disk elsewhere. No busy
 * handler: PASSIVE waits for nobody, and a checkpoint already running in
 * another connection makes this one skip a turn.
 */
export function openCheckpointConnection(file: string): Database.Database {
  const conn = new Database(file, { fileMustExist: true, timeout: 0 })
  conn.pragma('synchronous = FULL')
  return conn
}

/**
 * Starts checkpointing `file` (the database `db` writes, in WAL mode) on a
 * worker thread, and moves `db`'s automatic checkpoint back to the backstop.
 * The thread does not keep the process alive.
 */
export function startWalCheckpoints(db: Database.Database, file: string, opts: WalCheckpointsOptions = {}): WalCheckpoints {
  const everyMs = opts.everyMs ?? DEFAULT_WAL_CHECKPOINT_MS
  const backstopPages = opts.backstopPages ?? DEFAULT_WAL_BACKSTOP_PAGES
  if (!Number.isSafeInteger(everyMs) || everyMs < 1) throw new RangeError(`the WAL checkpoint interval must be a positive whole number of milliseconds, got ${everyMs}`)
  if (!Number.isSafeInteger(backstopPages) || backstopPages < 1) throw new RangeError(`the WAL checkpoint backstop must be a positive whole number of pages, got ${backstopPages}`)
  const counters = new SharedArrayBuffer(4 * Object.keys(WAL_CHECKPOINT_COUNTERS).length)
  const worker = new Worker(workerScriptBeside(import.meta.url, 'walCheckpointWorker.js'), { workerData: { file, everyMs, counters } satisfies WalCheckpointWorkerData })
  worker.unref()
  worker.on('message', (failure: WalCheckpointFailure) => {
    const what = failure.stopped
      ? `WAL checkpoint of ${file} failed with an I/O error, and its thread has stopped (the disk may have lost writes: check it, and restart the service): ${failure.error}`
      : `WAL checkpoint of ${file} failed: ${failure.error}`
    opts.onError?.(Object.assign(new Error(what), failure.code ? { code: failure.code } : {}))
  })
  // A thread that died (it could not open the file) leaves the backstop, as if it had never started.
  worker.on('error', (err: unknown) => opts.onError?.(err instanceof Error && err.message ? err : new Error(`the WAL checkpoint thread of ${file} ended: ${String((err as Error)?.message ?? err)}`)))
  db.pragma(`wal_autocheckpoint = ${backstopPages}`)
  const view = new Int32Array(counters)
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()))
  let closing: Promise<void> | undefined
  return {
    stats: () => ({
      runs: Atomics.load(view, WAL_CHECKPOINT_COUNTERS.runs),
      copied: Atomics.load(view, WAL_CHECKPOINT_COUNTERS.copied),
      busy: Atomics.load(view, WAL_CHECKPOINT_COUNTERS.busy),
      failed: Atomics.load(view, WAL_CHECKPOINT_COUNTERS.failed),
    }),
    close() {
      closing ??= (async () => {
        worker.postMessage('close')
        await exited
        if (db.open) db.pragma(`wal_autocheckpoint = ${SQLITE_DEFAULT_AUTOCHECKPOINT}`)
      })()
      return closing
    },
  }
}
