import Database from 'better-sqlite3'
import { auditRowHashFromJcs } from './rowHash.js'
import { ensureAuditSchema, GENESIS_HASH } from './schema.js'

export function openAuditDb(file: string): Database.Database {
  const db = new Database(file)
  db.pragma('journal_mode = WAL')
  // FULL: a committed event survives power loss, not just a process crash.
  db.pragma('synchronous = FULL')
  db.pragma('busy_timeout = 10000')
  ensureAuditSchema(db)
  return db
}

/**
 * Writes a batch of events in one BEGIN IMMEDIATE transaction. The chain's
 * tail is read inside the write lock, so appends from several processes stay
 * one linear chain.
 */
/** An event ready to store: its data already in canonical JSON (JCS). */
export interface PreparedEvent {
  id: string
  timestamp: number
  intentId: string
  event: string
  dataJcs: string
}

export function createBatchWriter(db: Database.Database): (events: PreparedEvent[]) => void {
  const tail = db.prepare<[], { seq: number; hash: string }>('SELECT seq, hash FROM audit_events ORDER BY seq DESC LIMIT 1')
  const insert = db.prepare(
    'INSERT INTO audit_events (seq, id, timestamp, intent_id, event, data, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  )
  const write = db.transaction((batch: PreparedEvent[]) => {
    const last = tail.get()
    let seq = last?.seq ?? 0
    let prevHash = last?.hash ?? GENESIS_HASH
    for (const e of batch) {
      seq += 1
      const hash = auditRowHashFromJcs({ seq, id: e.id, timestamp: e.timestamp, intentId: e.intentId, event: e.event, dataJcs: e.dataJcs, prevHash })
      insert.run(seq, e.id, e.timestamp, e.intentId, e.event, e.dataJcs, prevHash, hash)
      prevHash = hash
    }
  })
  return (events) => write.immediate(events)
}
