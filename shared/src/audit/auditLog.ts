import { randomUUID } from 'node:crypto'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import Database from 'better-sqlite3'
import { canonicalize } from '../canonical/jcs.js'
import { systemClock, type AuditEvent, type Clock } from '../types.js'
import type { WorkerReply } from './auditWorker.js'
import type { AuditRow } from './schema.js'
import { createBatchWriter, openAuditDb, type PreparedEvent } from './writer.js'

export interface AuditAppend {
  intentId: string
  event: string
  /** Event fields. Never key material, passphrases or secrets: operators read this log. */
  data: Record<string, unknown>
}

export interface AuditLog {
  /** Resolves once the event is committed (durable), in a group-committed transaction. */
  append(event: AuditAppend): Promise<AuditEvent>
  /** Newest first. */
  list(opts: { limit: number; intentId?: string }): AuditEvent[]
  /** Transactions committed through this handle (to observe group commit). */
  readonly commits: number
  close(): Promise<void>
}

export interface AuditLogOptions {
  clock?: Clock
  /**
   * 'worker' writes on a worker thread (the gateway, which serves many
   * requests); 'inline' writes on the calling thread (CLIs, the signer).
   */
  writer?: 'inline' | 'worker'
}

interface Pending {
  event: AuditEvent
  prepared: PreparedEvent
  resolve: (e: AuditEvent) => void
  reject: (err: Error) => void
}

/**
 * The audit log shared by all three processes (audit.db). Appends made in the
 * same tick, or while a commit is in progress, are written together in one
 * transaction; each append's promise resolves only after its commit.
 */
export function openAuditLog(file: string, opts: AuditLogOptions = {}): AuditLog {
  const clock = opts.clock ?? systemClock
  const db = openAuditDb(file)
  const newest = db.prepare<[number], AuditRow>('SELECT * FROM audit_events ORDER BY seq DESC LIMIT ?')
  const newestOfIntent = db.prepare<[string, number], AuditRow>('SELECT * FROM audit_events WHERE intent_id = ? ORDER BY seq DESC LIMIT ?')
  const commitBatch = opts.writer === 'worker' ? workerCommitter(file) : inlineCommitter(db)

  let queue: Pending[] = []
  let scheduled = false
  let inFlight = 0
  let commits = 0
  let closed = false
  const idle: Array<() => void> = []

  function flush(): void {
    scheduled = false
    // One commit at a time: appends made meanwhile wait and go in the next one.
    if (inFlight > 0 || queue.length === 0) return
    const batch = queue
    queue = []
    inFlight += 1
    commitBatch(batch.map((p) => p.prepared)).then(
      () => {
        commits += 1
        for (const p of batch) p.resolve(p.event)
      },
      (err: Error) => {
        const e = new Error(`audit log write failed (${batch.length} events not recorded): ${err.message}`)
        for (const p of batch) p.reject(e)
      },
    ).finally(() => {
      inFlight -= 1
      if (queue.length > 0) flush()
      else for (const done of idle.splice(0)) done()
    })
  }

  return {
    append({ intentId, event, data }) {
      if (closed) return Promise.reject(new Error('audit log is closed'))
      const stored = { ...data, intentId }
      let dataJcs: string
      try {
        // Canonicalised here, once: it fails before queueing for data that is
        // not plain JSON, so one bad event cannot fail its batch.
        dataJcs = canonicalize(stored)
      } catch (err) {
        return Promise.reject(new Error(`audit event ${event} has data that is not plain JSON: ${(err as Error).message}`))
      }
      const full: AuditEvent = { id: randomUUID(), timestamp: clock(), intentId, event, data: stored }
      const prepared: PreparedEvent = { id: full.id, timestamp: full.timestamp, intentId, event, dataJcs }
      return new Promise<AuditEvent>((resolve, reject) => {
        queue.push({ event: full, prepared, resolve, reject })
        if (!scheduled) {
          scheduled = true
          setImmediate(flush)
        }
      })
    },
    list({ limit, intentId }) {
      const rows = intentId === undefined ? newest.all(limit) : newestOfIntent.all(intentId, limit)
      return rows.map(toEvent)
    },
    get commits() {
      return commits
    },
    async close() {
      if (closed) return
      closed = true
      if (queue.length > 0 || inFlight > 0) {
        await new Promise<void>((resolve) => {
          idle.push(resolve)
          flush()
        })
      }
      await commitBatch.close()
      db.close()
    },
  }
}

interface Committer {
  (events: PreparedEvent[]): Promise<void>
  close(): Promise<void>
}

function inlineCommitter(db: Database.Database): Committer {
  const write = createBatchWriter(db)
  const commit = ((events: PreparedEvent[]) => {
    try {
      write(events)
      return Promise.resolve()
    } catch (err) {
      return Promise.reject(err as Error)
    }
  }) as Committer
  commit.close = async () => {}
  return commit
}

/** Compiled worker beside this file; under the test runner (TypeScript sources) the compiled copy in dist/. */
function workerScript(): string {
  const here = fileURLToPath(import.meta.url)
  const beside = here.replace(/auditLog\.(ts|js)$/, 'auditWorker.js')
  if (existsSync(beside)) return beside
  return here.replace(/\/src\/audit\/auditLog\.ts$/, '/dist/audit/auditWorker.js')
}

function workerCommitter(file: string): Committer {
  const worker = new Worker(workerScript(), { workerData: { file } })
  worker.unref()
  let nextId = 1
  const waiting = new Map<number, { resolve: () => void; reject: (e: Error) => void }>()
  const failAll = (err: Error) => {
    for (const w of waiting.values()) w.reject(err)
    waiting.clear()
  }
  worker.on('message', (reply: WorkerReply) => {
    const w = waiting.get(reply.batchId)
    if (!w) return
    waiting.delete(reply.batchId)
    if (reply.ok) w.resolve()
    else w.reject(new Error(reply.error))
  })
  worker.on('error', (err) => failAll(err))
  worker.on('exit', (code) => failAll(new Error(`audit writer thread exited (${code})`)))
  const commit = ((events: PreparedEvent[]) =>
    new Promise<void>((resolve, reject) => {
      const batchId = nextId++
      waiting.set(batchId, { resolve, reject })
      worker.ref()
      worker.postMessage({ batchId, events })
    }).finally(() => {
      if (waiting.size === 0) worker.unref()
    })) as Committer
  commit.close = () =>
    new Promise<void>((resolve) => {
      worker.once('exit', () => resolve())
      worker.ref()
      worker.postMessage('close')
    })
  return commit
}

export function toEvent(r: AuditRow): AuditEvent {
  return { id: r.id, timestamp: r.timestamp, intentId: r.intent_id, event: r.event, data: JSON.parse(r.data) as Record<string, unknown> }
}
