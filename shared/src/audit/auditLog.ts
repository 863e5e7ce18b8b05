import { randomUUID } from 'node:crypto'
import Database from 'better-sqlite3'
import { canonicalize } from '../canonical/jcs.js'
import { systemClock, type AuditEvent, type Clock } from '../types.js'
import { auditRowHash } from './rowHash.js'
import { ensureAuditSchema, GENESIS_HASH, type AuditRow } from './schema.js'

export interface AuditAppend {
  intentId: string
  event: string
  /** Event fields. Never key material, passphrases or tokens' secrets: this log is read by operators. */
  data: Record<string, unknown>
}

export interface AuditLog {
  /** Resolves once the event is committed (durable) in a group-committed transaction. */
  append(event: AuditAppend): Promise<AuditEvent>
  /** Newest first. */
  list(opts: { limit: number; intentId?: string }): AuditEvent[]
  /** Transactions committed by this handle (to observe group commit). */
  readonly commits: number
  close(): void
}

interface Pending {
  event: AuditEvent
  resolve: (e: AuditEvent) => void
  reject: (err: Error) => void
}

/**
 * The audit log shared by all three processes (audit.db). Appends that arrive
 * while a commit is being prepared are written together in one BEGIN
 * IMMEDIATE transaction, which reads the chain's tail inside the lock so the
 * chain stays linear across processes. synchronous=FULL: an event is on disk
 * before its promise resolves.
 */
export function openAuditLog(file: string, opts: { clock?: Clock } = {}): AuditLog {
  const clock = opts.clock ?? systemClock
  const db = new Database(file)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = FULL')
  db.pragma('busy_timeout = 10000')
  ensureAuditSchema(db)

  const tail = db.prepare<[], { seq: number; hash: string }>('SELECT seq, hash FROM audit_events ORDER BY seq DESC LIMIT 1')
  const insert = db.prepare(
    'INSERT INTO audit_events (seq, id, timestamp, intent_id, event, data, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  )
  const newest = db.prepare<[number], AuditRow>('SELECT * FROM audit_events ORDER BY seq DESC LIMIT ?')
  const newestOfIntent = db.prepare<[string, number], AuditRow>('SELECT * FROM audit_events WHERE intent_id = ? ORDER BY seq DESC LIMIT ?')

  let queue: Pending[] = []
  let scheduled = false
  let commits = 0
  let closed = false

  const writeBatch = db.transaction((batch: Pending[]) => {
    const last = tail.get()
    let seq = last?.seq ?? 0
    let prevHash = last?.hash ?? GENESIS_HASH
    for (const p of batch) {
      seq += 1
      const e = p.event
      const hash = auditRowHash({ seq, id: e.id, timestamp: e.timestamp, intentId: e.intentId, event: e.event, data: e.data, prevHash })
      insert.run(seq, e.id, e.timestamp, e.intentId, e.event, canonicalize(e.data), prevHash, hash)
      prevHash = hash
    }
  })

  function flush(): void {
    scheduled = false
    const batch = queue
    queue = []
    if (batch.length === 0) return
    try {
      writeBatch.immediate(batch)
      commits += 1
      for (const p of batch) p.resolve(p.event)
    } catch (err) {
      const e = new Error(`audit log write failed (${batch.length} events not recorded): ${(err as Error).message}`)
      for (const p of batch) p.reject(e)
    }
  }

  return {
    append({ intentId, event, data }) {
      if (closed) return Promise.reject(new Error('audit log is closed'))
      let stored: Record<string, unknown>
      try {
        // Validate before queueing so one bad event cannot fail its batch.
        stored = JSON.parse(canonicalize({ ...data, intentId })) as Record<string, unknown>
      } catch (err) {
        return Promise.reject(new Error(`audit event ${event} has data that is not plain JSON: ${(err as Error).message}`))
      }
      const full: AuditEvent = { id: randomUUID(), timestamp: clock(), intentId, event, data: stored }
      return new Promise<AuditEvent>((resolve, reject) => {
        queue.push({ event: full, resolve, reject })
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
    close() {
      if (closed) return
      flush()
      closed = true
      db.close()
    },
  }
}

export function toEvent(r: AuditRow): AuditEvent {
  return { id: r.id, timestamp: r.timestamp, intentId: r.intent_id, event: r.event, data: JSON.parse(r.data) as Record<string, unknown> }
}
