// The thread of startWalCheckpoints (walCheckpoints.ts): a connection of its
// own to one WAL-mode database, checkpointed (PASSIVE) on a timer. Counters go
// to shared memory; only a failure is posted to the parent.
import { parentPort, workerData } from 'node:worker_threads'
import { openCheckpointConnection, WAL_CHECKPOINT_COUNTERS, type WalCheckpointFailure, type WalCheckpointWorkerData } from './walCheckpoints.js'

const { file, everyMs, counters } = workerData as WalCheckpointWorkerData
const port = parentPort!
const view = new Int32Array(counters)
const failure = (err: unknown): WalCheckpointFailure => {
  const code = (err as { code?: unknown }).code
  return { error: (err as Error).message, ...(typeof code === 'string' ? { code } : {}) }
}

let db: ReturnType<typeof openCheckpointConnection>
try {
  db = openCheckpointConnection(file)
} catch (err) {
  // Said in a message of its own: an error thrown out of a thread reaches the parent without its text.
  port.postMessage(failure(err))
  port.close()
  process.exit(0)
}

// What the last run found: frames in the -wal file and how many of them are copied. A run copied
// something when the second grew, or when the writer restarted the -wal file and some are copied.
let last = { log: 0, checkpointed: 0 }
let lastReported = -Infinity

function run(): void {
  try {
    const [result] = db.pragma('wal_checkpoint(PASSIVE)') as Array<{ busy: number; log: number; checkpointed: number }>
    Atomics.add(view, WAL_CHECKPOINT_COUNTERS.runs, 1)
    if (!result) return
    // A busy run reports -1 for both figures: nothing to compare the next run with.
    if (result.busy !== 0) {
      Atomics.add(view, WAL_CHECKPOINT_COUNTERS.busy, 1)
      return
    }
    if (result.checkpointed > 0 && (result.checkpointed > last.checkpointed || result.log < last.log)) Atomics.add(view, WAL_CHECKPOINT_COUNTERS.copied, 1)
    last = { log: result.log, checkpointed: result.checkpointed }
  } catch (err) {
    Atomics.add(view, WAL_CHECKPOINT_COUNTERS.runs, 1)
    const code = (err as { code?: unknown }).code
    // Extended codes too (SQLITE_BUSY_RECOVERY, SQLITE_LOCKED_SHAREDCACHE): another connection's turn.
    if (typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'))) {
      Atomics.add(view, WAL_CHECKPOINT_COUNTERS.busy, 1)
      return
    }
    Atomics.add(view, WAL_CHECKPOINT_COUNTERS.failed, 1)
    if (typeof code === 'string' && code.startsWith('SQLITE_IOERR')) {
      // The disk failed a write or an fsync of this checkpoint. Linux reports such a failure once per open
      // file: a later run's fsync through this connection could succeed over copies that were lost, and mark
      // frames copied that only the -wal still holds. This thread checkpoints no more; the writer's own
      // checkpoint, through its own descriptors, meets the failure itself (see walSync.ts on fsync failures).
      clearInterval(timer)
      port.postMessage({ ...failure(err), stopped: true })
      db.close()
      port.close()
      return
    }
    // At most one report a minute: a file that stays unreadable is tried every run, not reported every run.
    const now = Date.now()
    if (now - lastReported < 60_000) return
    lastReported = now
    port.postMessage(failure(err))
  }
}

const timer = setInterval(run, everyMs)
port.on('message', (msg: unknown) => {
  if (msg !== 'close') return
  clearInterval(timer)
  db.close()
  port.close()
})
