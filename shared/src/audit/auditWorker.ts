// Runs the audit log's writes on a worker thread: hashing, the SQLite insert
// and the fsync never block the event loop of the process that serves
// requests. Each batch is committed with synchronous=NORMAL and then made
// durable by an fdatasync of the -wal file (createWalSync): the same
// guarantee as a FULL commit, with a moment in between at which the batch is
// committed and ordered but not yet durable, which a batch may ask to be told
// of (tellOrdered; see AuditLog.appendOrdered).
import { parentPort, workerData } from 'node:worker_threads'
import { createWalSync } from '../files/walSync.js'
import { decodeBatch } from './batchWire.js'
import { createBatchWriter, openAuditDb } from './writer.js'

export interface WorkerBatch {
  batchId: number
  /** The batch's events as encodeBatch wrote them (one string: the cheapest thing to post). */
  events: string
  /** Say { ordered: true } once committed, before the fsync. */
  tellOrdered?: true
}
export type WorkerReply =
  | { batchId: number; ok: true }
  | { batchId: number; ordered: true }
  | { batchId: number; ok: false; error: string; code?: string; durabilityUnknown?: true }

const { file, busyTimeoutMs } = workerData as { file: string; busyTimeoutMs: number }
const db = openAuditDb(file, busyTimeoutMs, 'NORMAL')
const write = createBatchWriter(db)
const wal = createWalSync(file)

function failed(batchId: number, err: unknown, afterCommit: boolean): WorkerReply {
  const code = (err as { code?: unknown }).code
  const reply: WorkerReply = { batchId, ok: false, error: (err as Error).message }
  if (typeof code === 'string') reply.code = code
  if (afterCommit) reply.durabilityUnknown = true
  return reply
}

parentPort!.on('message', (msg: WorkerBatch | 'close') => {
  if (msg === 'close') {
    void wal.close().finally(() => {
      db.close()
      parentPort!.close()
    })
    return
  }
  try {
    write(decodeBatch(msg.events))
  } catch (err) {
    parentPort!.postMessage(failed(msg.batchId, err, false))
    return
  }
  wal.committed()
  if (msg.tellOrdered) parentPort!.postMessage({ batchId: msg.batchId, ordered: true } satisfies WorkerReply)
  try {
    wal.durableSync()
  } catch (err) {
    parentPort!.postMessage(failed(msg.batchId, err, true))
    return
  }
  parentPort!.postMessage({ batchId: msg.batchId, ok: true } satisfies WorkerReply)
})
