// Runs the audit log's writes on a worker thread: hashing, the SQLite insert
// and the fsync of a synchronous=FULL commit then never block the event loop
// of the process that serves requests.
import { parentPort, workerData } from 'node:worker_threads'
import { decodeBatch } from './batchWire.js'
import { createBatchWriter, openAuditDb } from './writer.js'

export interface WorkerBatch {
  batchId: number
  /** The batch's events as encodeBatch wrote them (one string: the cheapest thing to post). */
  events: string
}
export type WorkerReply = { batchId: number; ok: true } | { batchId: number; ok: false; error: string; code?: string }

const { file, busyTimeoutMs } = workerData as { file: string; busyTimeoutMs: number }
const db = openAuditDb(file, busyTimeoutMs)
const write = createBatchWriter(db)
parentPort!.on('message', (msg: WorkerBatch | 'close') => {
  if (msg === 'close') {
    db.close()
    parentPort!.close()
    return
  }
  try {
    write(decodeBatch(msg.events))
    parentPort!.postMessage({ batchId: msg.batchId, ok: true } satisfies WorkerReply)
  } catch (err) {
    const code = (err as { code?: unknown }).code
    const reply: WorkerReply = { batchId: msg.batchId, ok: false, error: (err as Error).message }
    if (typeof code === 'string') reply.code = code
    parentPort!.postMessage(reply)
  }
})
