import { Worker } from 'node:worker_threads'
import { workerScriptBeside } from '../files/workerScript.js'
import { createWalSync, type WalSync, type WalSyncStats } from '../files/walSync.js'
import { startWalCheckpoints } from '../files/walCheckpoints.js'
import { OperatorError } from '../operatorError.js'
import { systemClock, type AuditEvent, type Clock } from '../types.js'
import type { WorkerBatch, WorkerReply } from './auditWorker.js'
import { encodeBatch } from './batchWire.js'
import { createChainCheck } from './chainSince.js'
import { prepareCheckpointEvent, prepareEvent, type AuditAppend } from './prepareEvent.js'
import { GENESIS_HASH, type AuditRow } from './schema.js'
import { MAX_AUDIT_DATA_DEPTH, nestedDeeperThan } from './plainJson.js'
import { createAuditTableWatch } from './tableCheck.js'
import type { CheckpointData } from './checkpoint.js'
import {
  AuditWriteError,
  createBatchWriter,
  DEFAULT_AUDIT_BUSY_TIMEOUT_MS,
  openAuditDb,
  type BatchWritten,
  type ChainHead,
  type PreparedEvent,
  type Sealer,
} from './writer.js'

// Callers: `data` must never hold key material, passphrases or any other
// secret. The log is append-only and read by operators (see AuditAppend).

export interface AuditLog {
  /**
   * Resolves once the event is committed (durable), in a group-committed
   * transaction. Rejects, writing nothing, for data that is not plain JSON
   * (AuditDataError) and, for the whole batch, when the transaction fails,
   * e.g. SQLITE_BUSY beyond the busy timeout (AuditWriteError).
   */
  append(event: AuditAppend, opts?: { checkpoint?: boolean }): Promise<AuditEvent>
  /**
   * As append; `ordered` also settles once the event is committed: from then
   * on any later write to audit.db, by any process, chains after it. With the
   * worker writer that is before the fsync that makes it durable (the writer
   * commits, says so, then fsyncs); otherwise it is when `durable` resolves.
   * For a process that hands work on to another whose audit rows must follow
   * this event (the gateway asking the approver): the other's own durable
   * commit, later in the same -wal file, makes this one durable too. Whatever
   * the caller answers still waits for `durable`. Rejects like `durable` when
   * the commit fails; after a commit, only `durable` reports a failed fsync.
   * `ordered` left unawaited never makes an unhandled rejection (`durable` carries the same failure).
   */
  appendOrdered(event: AuditAppend): { ordered: Promise<void>; durable: Promise<AuditEvent> }
  /**
   * Several events in one transaction, in order: all are written or none.
   * For rows that only mean something together (an approval's grant with
   * its token id, and the decision that announces it): written apart, a
   * failure between the two left a token on record for a request that then
   * went back on the list. Rejects, writing none, when any of them is not
   * plain JSON.
   */
  appendAll(events: readonly AuditAppend[]): Promise<AuditEvent[]>
  /**
   * Appends a signed checkpoint sealing the chain's head, in the next commit
   * (with whatever else joins it); resolves once it is durable. Only on a
   * log opened with `checkpoints`. `append(e, { checkpoint: true })` seals the
   * batch that carries `e` the same way, and rejects with
   * CheckpointRefusedError when the seal was refused (the event itself is
   * then in the log, unsealed).
   */
  checkpoint(): Promise<WrittenCheckpoint>
  /** The newest row (seq 0 and the genesis hash for an empty log). */
  head(): ChainHead
  /**
   * Writes one event in its own transaction before returning, for places that
   * cannot await (shutdown, exit handlers). Blocks the thread for the commit;
   * not ordered against appends still waiting in the group-commit queue.
   */
  appendSync(event: AuditAppend): AuditEvent
  /**
   * Newest first (by seq). `limit` is a non-negative integer. With `intentId`
   * the table is scanned (no index by intent: see schema.ts); for tools and
   * tests, not for a request path. A row no append could have written throws
   * AuditReadError, or with `malformed: 'show'` is shown as toShownEvent says.
   */
  list(opts: { limit: number; intentId?: string; malformed?: 'throw' | 'show' }): AuditEvent[]
  /**
   * The rows after `seq`, oldest first, at most `limit`, each with its seq (a
   * reader's cursor: nothing is skipped however many arrive between two
   * reads). Rows no append could have written are shown as toShownEvent says.
   */
  listAfter(seq: number, limit: number): Array<{ seq: number; event: AuditEvent }>
  /**
   * The events named `event` (one name or several, in one walk) stamped
   * after `sinceMs`, newest first. Walks back
   * from the newest row and stops at the first row of any kind stamped more
   * than AUDIT_CLOCK_SLACK_MS before `sinceMs`: rows are in commit order and
   * stamped just before it, so their timestamps only run backwards by that
   * much when a writer waited on another's lock or the clock was stepped.
   */
  eventsSince(event: string | readonly string[], sinceMs: number): AuditEvent[]
  /** Transactions committed through this handle (to observe group commit). */
  readonly commits: number
  /** With `fsync: 'grouped'`: commits, fsyncs, and commit batches (appends made in one tick) released per fsync. */
  syncStats(): WalSyncStats | undefined
  close(): Promise<void>
}

/** How far back in time eventsSince keeps looking past its bound (see there). */
export const AUDIT_CLOCK_SLACK_MS = 10 * 60_000

export interface AuditLogOptions {
  clock?: Clock
  /**
   * 'worker' writes on a worker thread (the gateway, which serves many
   * requests); 'inline' writes on the calling thread (CLIs, the signer).
   */
  writer?: 'inline' | 'worker'
  /** How long a commit waits for another process's write lock (default 5000 ms). */
  busyTimeoutMs?: number
  /** The signer's audit key: makes checkpoints possible (inline writer only). */
  checkpoints?: AuditCheckpointer
  /**
   * 'in-commit' (default): every commit fsyncs on the writing thread
   * (synchronous=FULL). 'grouped' (inline writer only; the signer and the approver): commits
   * write without an fsync and one fdatasync on libuv's pool covers every
   * commit made before it started; appends resolve only after it. Either
   * way a requested checkpoint is written in the same transaction as the
   * rows of its batch, and recorded (AuditCheckpointer.written) once durable.
   */
  fsync?: 'in-commit' | 'grouped'
  /** With `fsync: 'grouped'`: how many fdatasyncs may run at once (WalSyncOptions.lanes; default 1). */
  fsyncLanes?: number
  /**
   * The grouped and worker writers (the services) leave SQLite's WAL
   * checkpoints of audit.db to a thread of their own (files/walCheckpoints.ts),
   * off the thread that commits; a checkpoint that failed is told here (the
   * writer's own checkpoint then takes over at its backstop).
   */
  onWalCheckpointError?: (err: Error) => void
}

/** A checkpoint row as committed: its own seq and hash, and the row it seals. */
export interface WrittenCheckpoint {
  seq: number
  hash: string
  sealed: ChainHead
}

export interface AuditCheckpointer {
  /** Signs the checkpoint data for `head`; called inside the write transaction. */
  sign(head: ChainHead): Omit<CheckpointData, 'seq' | 'headHash'>
  /**
   * Called once the commit that wrote a checkpoint is durable (the signer
   * records it in signer.db). Must report its own failures: what it throws is dropped.
   */
  written(checkpoint: WrittenCheckpoint): void
  /**
   * The last checkpoint row recorded by `written` (signer.db's), or null for
   * none yet. A new checkpoint is signed only over a chain that still
   * continues from it (createChainCheck); otherwise none is written, and
   * `refused` is told why. Optional: without it every head is sealed.
   */
  anchor?(): ChainHead | null
  /** Called (inside the write transaction) when a checkpoint was refused; must not throw. */
  refused?(why: string): void
}

/** checkpoint() when the chain no longer continues from the last recorded checkpoint (AuditCheckpointer.refused was told). */
export class CheckpointRefusedError extends Error {
  override name = 'CheckpointRefusedError'
}

interface Pending {
  /** Absent for a bare checkpoint request. */
  prepared?: PreparedEvent
  checkpoint: boolean
  /** appendOrdered: called once the batch is committed, before its fsync where the writer can tell the two apart. */
  ordered?: () => void
  resolve: (written: BatchWritten) => void
  reject: (err: Error) => void
}

/**
 * The audit log shared by all three processes (audit.db). Appends made in the
 * same tick, or while a commit is in progress, are written together in one
 * transaction; each append's promise resolves only after its commit.
 */
export function openAuditLog(file: string, opts: AuditLogOptions = {}): AuditLog {
  const clock = opts.clock ?? systemClock
  const busyTimeoutMs = opts.busyTimeoutMs ?? DEFAULT_AUDIT_BUSY_TIMEOUT_MS
  const grouped = opts.fsync === 'grouped'
  if (grouped && opts.writer === 'worker') throw new Error("grouped audit fsync needs the inline writer (the fsync follows the calling thread's commits)")
  const db = openAuditDb(file, busyTimeoutMs, grouped ? 'NORMAL' : 'FULL')
  const newest = db.prepare<[number], AuditRow>('SELECT * FROM audit_events ORDER BY seq DESC LIMIT ?')
  const newestOfIntent = db.prepare<[string, number], AuditRow>('SELECT * FROM audit_events WHERE intent_id = ? ORDER BY seq DESC LIMIT ?')
  const rowsAfter = db.prepare<[number, number], AuditRow>('SELECT * FROM audit_events WHERE seq > ? ORDER BY seq LIMIT ?')
  const newestFirst = db.prepare<[], AuditRow>('SELECT * FROM audit_events ORDER BY seq DESC')
  const tailRow = db.prepare<[], ChainHead>('SELECT seq, hash FROM audit_events ORDER BY seq DESC LIMIT 1')
  // The last checkpoint this log committed, recorded in signer.db or not yet (that waits for its fsync).
  let lastSealed: ChainHead | null = null
  const writeBatch = createBatchWriter(db)
  const writeNow = (events: PreparedEvent[], seal?: Sealer): BatchWritten => {
    const written = writeBatch(events, seal)
    if (written.checkpoint) lastSealed = { seq: written.checkpoint.seq, hash: written.checkpoint.hash }
    return written
  }
  const tableUnchanged = createAuditTableWatch(
    db,
    (problem) => new AuditReadError(`audit.db was changed while countersign had it open: ${problem}; it is not read any more (countersign-audit verify --db names what changed)`),
  )
  /** Every read runs in one read transaction with the table check before it (createAuditTableWatch). */
  const read = <T>(rows: () => T): T => db.transaction(() => {
    tableUnchanged()
    return rows()
  })()
  const checkpoints = opts.checkpoints
  if (checkpoints && opts.writer === 'worker') throw new Error('audit checkpoints need the inline writer (the key stays on the calling thread)')
  const commitBatch = opts.writer === 'worker' ? workerCommitter(file, busyTimeoutMs, opts.onWalCheckpointError) : inlineCommitter(writeNow)
  const chainBreakSince = createChainCheck(db)
  let refusedBecause: string | null = null
  const sealer: Sealer | undefined = checkpoints
    ? (head) => {
        let problem: string | null
        try {
          // From the newer of the checkpoint signer.db recorded and the last one written here: a checkpoint is
          // recorded only once its fsync is done, and one committed meanwhile (grouped fsync, the normal case
          // under load) was checked from the one before. Found by review: a writer of audit.db that deleted the
          // first one's signature_created row and its checkpoint in that moment had the second seal over it,
          // and verify passed.
          const recorded = checkpoints.anchor?.() ?? null
          const anchor = lastSealed && (!recorded || lastSealed.seq > recorded.seq) ? lastSealed : recorded
          problem = anchor ? chainBreakSince(anchor) : null
        } catch (err) {
          // Unknown is not the same as unbroken: no signature over what could not be checked.
          problem = `the chain since the last recorded checkpoint could not be checked (${(err as Error).message})`
        }
        refusedBecause = problem
        if (problem) {
          checkpoints.refused?.(problem)
          return null
        }
        return prepareCheckpointEvent({ seq: head.seq, headHash: head.hash, ...checkpoints.sign(head) }, clock).prepared
      }
    : undefined

  let queue: Pending[] = []
  let scheduled = false
  let inFlight = 0
  let commits = 0
  let closed = false
  const idle: Array<() => void> = []

  const wal: WalSync | undefined = grouped ? createWalSync(file, { lanes: opts.fsyncLanes ?? 1 }) : undefined
  const walCheckpoints = grouped ? startWalCheckpoints(db, file, opts.onWalCheckpointError ? { onError: opts.onWalCheckpointError } : {}) : undefined
  /**
   * Grouped writers (the signer, the approver) run on their event loop, and
   * audit.db is written by all three processes: a write lock another holds
   * was waited for with SQLite's busy timeout, which sleeps on the calling
   * thread. Found by review: a process that held the lock froze the signer
   * (both its sockets) for 5 s at every append. They try without waiting
   * and, while the lock is held, again every LOCK_RETRY_MS on a timer, for
   * the same busyTimeoutMs in all. Reads keep the busy timeout: in WAL mode a
   * writer does not block them.
   */
  let lockedSince: number | null = null
  /** The timer of the next try while the lock is held: close() leaves it to run rather than start a second loop. */
  let lockRetry: ReturnType<typeof setTimeout> | null = null
  // Prepared: a pair of db.pragma calls cost 9 µs a batch, these 4.
  const noWait = db.prepare('PRAGMA busy_timeout = 0')
  const waitAgain = db.prepare(`PRAGMA busy_timeout = ${Math.trunc(busyTimeoutMs)}`)
  const writeWithoutWaiting = (events: PreparedEvent[], seal?: Sealer): BatchWritten => {
    noWait.get()
    try {
      return writeNow(events, seal)
    } finally {
      waitAgain.get()
    }
  }

  /**
   * Grouped fsync: writes the queued events now, resolves them after the fsync
   * that covers them. A checkpoint asked for by any of them seals the batch in
   * the same transaction: written later (it once waited for the next fsync to
   * start, to share one checkpoint between commits), it sealed whatever the
   * file held by then, and a writer of audit.db that deleted or rewrote the
   * signer's signature_created row in that moment had its edit sealed and
   * passed verify (found by review).
   */
  function flushGrouped(w: WalSync): void {
    scheduled = false
    const batch = queue
    queue = []
    if (batch.length === 0) return
    const events = batch.flatMap((p) => (p.prepared ? [p.prepared] : []))
    const seal = batch.some((p) => p.checkpoint) ? sealer : undefined
    let written: BatchWritten
    try {
      written = writeWithoutWaiting(events, seal)
      lockedSince = null
      commits += 1
      w.committed()
    } catch (err) {
      if (isLockedOut(err) && performance.now() - (lockedSince ??= performance.now()) < busyTimeoutMs) {
        // Tried again shortly, with whatever is appended meanwhile, in order.
        queue = batch.concat(queue)
        scheduled = true
        lockRetry = setTimeout(() => {
          lockRetry = null
          flush()
        }, LOCK_RETRY_MS)
        return
      }
      lockedSince = null
      const e = new AuditWriteError(`audit log write failed (${batch.length} events not recorded): ${(err as Error).message}`, codeOf(err))
      for (const p of batch) p.reject(e)
      if (inFlight === 0 && queue.length === 0) for (const done of idle.splice(0)) done()
      return
    }
    for (const p of batch) p.ordered?.()
    inFlight += 1
    w.durable()
      .then(
        () => {
          // signer.db learns of a checkpoint only once it is on disk: a power cut cannot leave signer.db naming a checkpoint the log lost.
          if (written.checkpoint) recordCheckpoint(written.checkpoint)
          for (const p of batch) p.resolve(written)
        },
        (err: Error) => {
          const e = new AuditWriteError(`audit log fsync failed (${batch.length} events of unknown durability): ${err.message}`, codeOf(err), true)
          for (const p of batch) p.reject(e)
        },
      )
      .finally(() => {
        inFlight -= 1
        if (inFlight === 0 && queue.length === 0) for (const done of idle.splice(0)) done()
      })
  }

  /** The rows are committed whatever happens here: a checkpointer that fails to record one must not leave the batch's appends unanswered. */
  function recordCheckpoint(checkpoint: WrittenCheckpoint): void {
    try {
      checkpoints!.written(checkpoint)
    } catch {
      /* the checkpointer reports its own failures (AuditCheckpointer.written) */
    }
  }

  function flush(): void {
    if (wal) return flushGrouped(wal)
    scheduled = false
    // Inline: one commit at a time, appends made meanwhile wait and go in the
    // next one. The worker takes each tick's appends at once and gathers on
    // its side whatever arrives while it commits (see auditWorker.ts).
    if ((inFlight > 0 && !commitBatch.gathers) || queue.length === 0) return
    const batch = queue
    queue = []
    inFlight += 1
    const seal = batch.some((p) => p.checkpoint) ? sealer : undefined
    const events = batch.flatMap((p) => (p.prepared ? [p.prepared] : []))
    const ordered = batch.some((p) => p.ordered) ? () => batch.forEach((p) => p.ordered?.()) : undefined
    commitBatch(events, seal, ordered).then(
      (written) => {
        commits += 1
        if (written.checkpoint) recordCheckpoint(written.checkpoint)
        ordered?.() // the in-commit writers cannot tell committed from durable: now is when both hold
        for (const p of batch) p.resolve(written)
      },
      (err: Error) => {
        const e = (err as AuditWriteError).committed
          ? new AuditWriteError(`audit log fsync failed (${batch.length} events of unknown durability): ${err.message}`, codeOf(err), true)
          : new AuditWriteError(`audit log write failed (${batch.length} events not recorded): ${err.message}`, codeOf(err))
        for (const p of batch) p.reject(e)
      },
    ).finally(() => {
      inFlight -= 1
      if (queue.length > 0) flush()
      else if (inFlight === 0) for (const done of idle.splice(0)) done()
    })
  }

  /** Validated and canonicalised before queueing: a bad event fails alone and never fails the batch it would have joined. */
  function prepare(input: AuditAppend): ReturnType<typeof prepareEvent> {
    if (closed) throw new Error('audit log is closed')
    return prepareEvent(input, clock)
  }

  function enqueue(prepared: PreparedEvent | undefined, checkpoint: boolean, ordered?: () => void): Promise<BatchWritten> {
    return new Promise<BatchWritten>((resolve, reject) => {
      // Every entry of one shape, written out rather than spread: the queue's
      // readers stay monomorphic, and a spread of differently shaped items
      // took a slow path on every append (seen in the build's profile).
      queue.push({ prepared, checkpoint, ordered, resolve, reject })
      if (!scheduled) {
        scheduled = true
        setImmediate(flush)
      }
    })
  }

  return {
    append(input, appendOpts = {}) {
      if (appendOpts.checkpoint && !sealer && !closed) return Promise.reject(new Error('this audit log has no checkpoint key'))
      let ready: ReturnType<typeof prepareEvent>
      try {
        ready = prepare(input)
      } catch (err) {
        return Promise.reject(err as Error)
      }
      if (!appendOpts.checkpoint) return enqueue(ready.prepared, false).then(() => ready.event)
      // The event is committed either way; a batch the sealer refused to sign is not what was asked for.
      // Found by review: the signer handed out signatures whose rows no checkpoint sealed, and a writer
      // of audit.db could delete or rewrite them afterwards with verify none the wiser.
      return enqueue(ready.prepared, true).then((written) => {
        if (!written.checkpoint) throw new CheckpointRefusedError(`audit checkpoint refused: ${refusedBecause ?? 'not written'}`)
        return ready.event
      })
    },
    appendAll(inputs) {
      let ready: Array<ReturnType<typeof prepareEvent>>
      try {
        ready = inputs.map(prepare)
      } catch (err) {
        return Promise.reject(err as Error)
      }
      // Queued in one turn, so they leave in one batch: one transaction, whichever writer commits it.
      return Promise.all(ready.map((r) => enqueue(r.prepared, false).then(() => r.event)))
    },
    appendOrdered(input) {
      let ready: ReturnType<typeof prepareEvent>
      try {
        ready = prepare(input)
      } catch (err) {
        const failed = Promise.reject(err as Error)
        return { ordered: observedTwin(failed.then(() => undefined)), durable: failed }
      }
      let committed!: () => void
      const ordered = new Promise<void>((resolve) => (committed = resolve))
      const durable = enqueue(ready.prepared, false, () => committed()).then(() => ready.event)
      // A failed commit rejects both; once committed, `ordered` has resolved and only `durable` can still fail.
      return { ordered: observedTwin(Promise.race([ordered, durable.then(() => undefined)])), durable }
    },
    async checkpoint() {
      if (closed) throw new Error('audit log is closed')
      if (!sealer) throw new Error('this audit log has no checkpoint key')
      // The long part of the chain check (every row since the last checkpoint), before the write
      // lock is taken; the sealer, inside it, then checks only what came after. Its own errors
      // are found again there, and reported.
      try {
        const anchor = checkpoints?.anchor?.()
        if (anchor) read(() => chainBreakSince.advance(anchor))
      } catch {
        /* checked again inside the transaction */
      }
      const written = await enqueue(undefined, true)
      if (!written.checkpoint) throw new CheckpointRefusedError(`audit checkpoint refused: ${refusedBecause ?? 'not written'}`)
      return written.checkpoint
    },
    head() {
      return read(() => tailRow.get()) ?? { seq: 0, hash: GENESIS_HASH }
    },
    appendSync(input) {
      if (closed) throw new Error('audit log is closed')
      const { event, prepared } = prepareEvent(input, clock)
      try {
        writeNow([prepared])
        if (wal) {
          wal.committed()
          wal.durableSync()
        }
      } catch (err) {
        throw new AuditWriteError(`audit log write failed (event ${event.event} not recorded): ${(err as Error).message}`, codeOf(err))
      }
      commits += 1
      return event
    },
    list({ limit, intentId, malformed = 'throw' }) {
      if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError(`audit list limit must be a non-negative integer, got ${limit}`)
      const rows = read(() => (intentId === undefined ? newest.all(limit) : newestOfIntent.all(intentId, limit)))
      return rows.map(malformed === 'show' ? toShownEvent : toEvent)
    },
    listAfter(seq, limit) {
      if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError(`audit listAfter limit must be a non-negative integer, got ${limit}`)
      return read(() => rowsAfter.all(seq, limit)).map((r) => ({ seq: r.seq, event: toShownEvent(r) }))
    },
    eventsSince(event, sinceMs) {
      const wanted = new Set(typeof event === 'string' ? [event] : event)
      return read(() => {
        const found: AuditEvent[] = []
        for (const row of newestFirst.iterate()) {
          if (row.timestamp < sinceMs - AUDIT_CLOCK_SLACK_MS) break
          if (wanted.has(row.event) && row.timestamp > sinceMs) found.push(toEvent(row))
        }
        return found
      })
    },
    get commits() {
      return commitBatch.transactions?.() ?? commits
    },
    syncStats() {
      return wal?.stats()
    },
    async close() {
      if (closed) return
      closed = true
      if (queue.length > 0 || inFlight > 0) {
        await new Promise<void>((resolve) => {
          idle.push(resolve)
          if (!lockRetry) flush()
        })
      }
      await wal?.close()
      await walCheckpoints?.close()
      await commitBatch.close()
      db.close()
    },
  }
}

interface Committer {
  /** `ordered`: called once the batch is committed, where that comes before it is durable (the worker). */
  (events: PreparedEvent[], seal?: Sealer, ordered?: () => void): Promise<BatchWritten>
  close(): Promise<void>
  /** Batches handed over while a commit runs are gathered into the next one by the committer itself. */
  gathers?: boolean
  /** Transactions the committer made, where that is not one per batch (it gathers). */
  transactions?: () => number
}

function inlineCommitter(write: (events: PreparedEvent[], seal?: Sealer) => BatchWritten): Committer {
  const commit = ((events: PreparedEvent[], seal?: Sealer) => {
    try {
      return Promise.resolve(write(events, seal))
    } catch (err) {
      return Promise.reject(err as Error)
    }
  }) as Committer
  commit.close = async () => {}
  return commit
}

/** Compiled worker beside this file; under the test runner (TypeScript sources) the compiled copy in dist/. */
function workerCommitter(file: string, busyTimeoutMs: number, onWalCheckpointError?: (err: Error) => void): Committer {
  const worker = new Worker(workerScriptBeside(import.meta.url, 'auditWorker.js'), { workerData: { file, busyTimeoutMs } })
  worker.unref()
  // Once the thread is gone, every batch is refused at once: a message posted
  // to an exited worker would never be answered and its appends would hang.
  let dead: Error | undefined
  let nextId = 1
  const waiting = new Map<number, { resolve: (w: BatchWritten) => void; reject: (e: Error) => void; ordered?: () => void }>()
  const failAll = (err: Error) => {
    dead ??= err
    for (const w of waiting.values()) w.reject(err)
    waiting.clear()
  }
  let transactions = 0
  worker.on('message', (reply: WorkerReply) => {
    if ('walCheckpointError' in reply) {
      onWalCheckpointError?.(Object.assign(new Error(reply.walCheckpointError), reply.code ? { code: reply.code } : {}))
      return
    }
    if ('ok' in reply && reply.ok) transactions += 1
    for (const batchId of reply.batchIds) {
      const w = waiting.get(batchId)
      if (!w) continue
      if ('ordered' in reply) {
        w.ordered?.()
        continue
      }
      waiting.delete(batchId)
      if (reply.ok) w.resolve({})
      else w.reject(new AuditWriteError(reply.error, reply.code, reply.durabilityUnknown === true))
    }
  })
  worker.on('error', (err) => failAll(err))
  worker.on('exit', (code) => failAll(new Error(`audit writer thread exited (${code})`)))
  const commit = ((events: PreparedEvent[], _seal?: Sealer, ordered?: () => void) =>
    new Promise<BatchWritten>((resolve, reject) => {
      if (dead) {
        reject(new Error(`audit writer thread is gone: ${dead.message}`))
        return
      }
      const batchId = nextId++
      waiting.set(batchId, ordered ? { resolve, reject, ordered } : { resolve, reject })
      worker.ref()
      const batch: WorkerBatch = { batchId, events: encodeBatch(events) }
      if (ordered) batch.tellOrdered = true
      worker.postMessage(batch)
    }).finally(() => {
      if (waiting.size === 0) worker.unref()
    })) as Committer
  commit.gathers = true
  commit.transactions = () => transactions
  commit.close = () =>
    new Promise<void>((resolve) => {
      if (dead) {
        resolve()
        return
      }
      worker.once('exit', () => resolve())
      worker.ref()
      worker.postMessage('close')
    })
  return commit
}

/**
 * `ordered` fails only when `durable` does, with the same error, and a caller
 * that answers without waiting for the commit (an allowed or denied intent)
 * never awaits it: marked as observed, its rejection is not an unhandled one
 * that ends the process. Whoever awaits it still sees the rejection.
 */
function observedTwin<T>(p: Promise<T>): Promise<T> {
  p.catch(() => undefined)
  return p
}

/** How often a grouped writer tries again while another process holds audit.db's write lock. */
const LOCK_RETRY_MS = 10

/** SQLITE_BUSY and its extended codes: another connection holds the lock. */
function isLockedOut(err: unknown): boolean {
  return codeOf(err)?.startsWith('SQLITE_BUSY') === true
}

function codeOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown }).code
  return typeof code === 'string' ? code : undefined
}

/**
 * A row no append could have written (its data is not a JSON object, or a
 * column holds another type than the one every append writes): the file was
 * changed outside countersign. An OperatorError, so a process that meets one
 * at start (the gateway rebuilding its rate-limit window) says so in words.
 */
export class AuditReadError extends OperatorError {
  override name = 'AuditReadError'
}

/** The columns a reader turns into an event. */
export type AuditEventRow = Pick<AuditRow, 'seq' | 'id' | 'timestamp' | 'intent_id' | 'event' | 'data'>

/** Why no append could have written this row (the file was changed outside countersign), or null. */
export function auditRowProblem(r: AuditEventRow): string | null {
  return readRow(r).problem
}

/** Integer Unix milliseconds a Date can hold (±8.64e15): what the appending clock writes, and what readers turn into dates. */
function isDateMillis(t: unknown): t is number {
  return Number.isSafeInteger(t) && Math.abs(t as number) <= 8.64e15
}

/** The row's problem in words, or null for a row an append could have written; with the data parsed. */
function readRow(r: AuditEventRow): { problem: string; data?: undefined } | { problem: null; data: Record<string, unknown> } {
  const where = `audit.db row ${r.seq} (${String(r.event)})`
  const changed = 'which no append writes; the log was changed outside countersign (countersign-audit verify names what changed)'
  let data: unknown
  try {
    data = typeof r.data === 'string' ? JSON.parse(r.data) : undefined
  } catch {
    data = undefined
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return { problem: `${where}: its data is not a JSON object, ${changed}` }
  // Deeper than an append accepts: every reader that serialises it again (history, the feed, webhooks) would throw.
  if (nestedDeeperThan(data, MAX_AUDIT_DATA_DEPTH)) return { problem: `${where}: its data is nested more than ${MAX_AUDIT_DATA_DEPTH} levels deep, ${changed}` }
  if (typeof r.id !== 'string' || typeof r.intent_id !== 'string' || typeof r.event !== 'string' || !isDateMillis(r.timestamp)) {
    return { problem: `${where}: its id, intent_id, event or timestamp is not of the type every append writes, ${changed}` }
  }
  return { problem: null, data: data as Record<string, unknown> }
}

export function toEvent(r: AuditEventRow): AuditEvent {
  const read = readRow(r)
  if (read.problem !== null) throw new AuditReadError(read.problem)
  return { id: r.id, timestamp: r.timestamp, intentId: r.intent_id, event: r.event, data: read.data }
}

/**
 * What history, the dashboard's feed and `countersign-audit tail` show for a
 * row: toEvent's event, or, for a row no append could have written, the row
 * as far as it reads, its data naming the problem (`malformedRow`). A row
 * inserted by whoever can write audit.db then shows up where operators look
 * instead of failing the history request or stopping the feed.
 */
export function toShownEvent(r: AuditEventRow): AuditEvent {
  const read = readRow(r)
  if (read.problem === null) return { id: r.id, timestamp: r.timestamp, intentId: r.intent_id, event: r.event, data: read.data }
  const intentId = typeof r.intent_id === 'string' ? r.intent_id : 'system'
  return {
    id: typeof r.id === 'string' ? r.id : `row-${r.seq}`,
    timestamp: isDateMillis(r.timestamp) ? r.timestamp : 0,
    intentId,
    event: typeof r.event === 'string' ? r.event : 'malformed_row',
    data: { intentId, malformedRow: read.problem },
  }
}
