import Database from 'better-sqlite3'
import { auditRowHash } from './rowHash.js'
import { GENESIS_HASH, type AuditRow } from './schema.js'

export type AuditVerification =
  | { ok: true; rows: number }
  | { ok: false; rows: number; firstBadSeq: number; problem: string }

/**
 * Walks the chain in seq order: sequence numbers must be 1, 2, 3…, each row
 * must link to the previous row's hash, and each stored hash must match the
 * row's content. Reports the first row where any of that fails.
 */
export function verifyAuditChain(file: string): AuditVerification {
  const db = new Database(file, { readonly: true, fileMustExist: true })
  try {
    const rows = db.prepare<[], AuditRow>('SELECT * FROM audit_events ORDER BY seq ASC').iterate()
    let expectedSeq = 1
    let prevHash = GENESIS_HASH
    let count = 0
    for (const r of rows) {
      const bad = (problem: string): AuditVerification => ({ ok: false, rows: count, firstBadSeq: r.seq, problem })
      if (r.seq !== expectedSeq) return bad(`expected row ${expectedSeq} next, found ${r.seq} (rows deleted or inserted)`)
      if (r.prev_hash !== prevHash) return bad('its link does not match the previous row (a row before it was changed, removed or reordered)')
      let data: unknown
      try {
        data = JSON.parse(r.data)
      } catch {
        return bad('its data is not valid JSON')
      }
      const hash = auditRowHash({ seq: r.seq, id: r.id, timestamp: r.timestamp, intentId: r.intent_id, event: r.event, data, prevHash: r.prev_hash })
      if (hash !== r.hash) return bad('its content does not match its hash (the row was edited)')
      prevHash = r.hash
      expectedSeq += 1
      count += 1
    }
    return { ok: true, rows: count }
  } finally {
    db.close()
  }
}
