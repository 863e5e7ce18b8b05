// Runs the audit log's writes on a worker thread: hashing, the SQLite insert
// and the fsync never block the event loop of the process that serves
// requests. Each commit is made with synchronous=NORMAL and then made durable
// by an fdatasync of the -wal file (createWalSync): the same guarantee as a
// FULL commit, with a moment in between at which the batches are committed
// and ordered but not yet durable, which a batch may ask to be told of
// (tellOrdered; see AuditLog.appendOrdered).
//
// The event loop posts each tick's appends as they come; while this thread
// commits and fsyncs, the batches posted meanwhile wait in its port, and the
// next commit takes all of them at once (receiveMessageOnPort): one
// transaction and one fsync for everything that arrived during the last one,
// started the moment that one is done, without a round trip to the event loop.
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads'
import { createWalSync } from '../files/walSync.js'
import { startWalCheckpoints } from '../files/walCheckpoints.js'
import { decodeBatch } from './batchWire.js'
import { createBatchWriter, openAuditDb, type PreparedEvent } from './writer.js'

export interface WorkerBatch {
  batchId: number
  /** The batch's events as encodeBatch wrote them (one string: the cheapest thing to post). */
  events: string
  /** Say { ordered } once committed, before the fsync. */
  tellOrdered?: true
}
export type WorkerReply =
  | { batchIds: number[]; ok: true }
  | { walCheckpointError: string; code?: string }
  | { batchIds: number[]; ordered: true }
  | { batchIds: number[]; ok: false; error: string; code?: string; durabilityUnknown?: true }

const { file, busyTimeoutMs } = workerData as { file: string; busyTimeoutMs: number }
const db = openAuditDb(file, busyTimeoutMs, 'NORMAL')
const write = createBatchWriter(db)
const wal = createWalSync(file)
// SQLite's checkpoints of the -wal file on a thread of their own: this thread's commits are the audit appends' wait.
const walCheckpoints = startWalCheckpoints(db, file, {
  onError: (err) => {
    const code = (err as { code?: unknown }).code
    port.postMessage({ walCheckpointError: err.message, ...(typeof code === 'string' ? { code } : {}) } satisfies WorkerReply)
  },
})
const port = parentPort!

function failed(batchIds: number[], err: unknown, afterCommit: boolean): WorkerReply {
  const code = (err as { code?: unknown }).code
  const reply: WorkerReply = { batchIds, ok: false, error: (err as Error).message }
  if (typeof code === 'string') reply.code = code
  if (afterCommit) reply.durabilityUnknown = true
  return reply
}

function close(): void {
  void Promise.all([wal.close(), walCheckpoints.close()]).finally(() => {
    db.close()
    port.close()
  })
}

port.on('message', (first: WorkerBatch | 'close') => {
  // This message and every one that queued up behind it.
  const batches: WorkerBatch[] = []
  let closing = false
  for (let msg: WorkerBatch | 'close' | undefined = first; msg !== undefined; msg = receiveMessageOnPort(port)?.message as WorkerBatch | 'close' | undefined) {
    if (msg === 'close') closing = true
    else batches.push(msg)
  }
  if (batches.length > 0) commit(batches)
  if (closing) close()
})

function commit(batches: WorkerBatch[]): void {
  const batchIds = batches.map((b) => b.batchId)
  let events: PreparedEvent[]
  try {
    events = batches.flatMap((b) => decodeBatch(b.events))
    write(events)
  } catch (err) {
    port.postMessage(failed(batchIds, err, false))
    return
  }
  wal.committed()
  const ordered = batches.filter((b) => b.tellOrdered).map((b) => b.batchId)
  if (ordered.length > 0) port.postMessage({ batchIds: ordered, ordered: true } satisfies WorkerReply)
  try {
    wal.durableSync()
  } catch (err) {
    port.postMessage(failed(batchIds, err, true))
    return
  }
  port.postMessage({ batchIds, ok: true } satisfies WorkerReply)
}
