import type Database from 'better-sqlite3'
import { auditRowHashFromJcs } from './rowHash.js'
import type { AuditRow } from './schema.js'
import type { ChainHead } from './writer.js'

/**
 * Why the log no longer continues from `anchor` (a row the signer sealed and
 * recorded in signer.db, where no other process writes), or null when it
 * does: that row is still there with its hash, and every row after it links
 * to the one before and hashes to what it stores, up to the head.
 *
 * The signer asks this before it signs a new checkpoint. Without it, whoever
 * can write audit.db could rewrite sealed rows, drop the checkpoints that no
 * longer verify, recompute every hash, and wait for the signer's next
 * checkpoint to vouch for the forged chain (and to move signer.db's record
 * onto it). Read inside the write transaction, so nothing changes meanwhile.
 * Costs one hash per row since the last checkpoint (at most ~100 rows or 10 s
 * of them).
 */
export function createChainCheck(db: Database.Database): (anchor: ChainHead) => string | null {
  const from = db.prepare<[number], AuditRow>('SELECT * FROM audit_events WHERE seq >= ? ORDER BY seq')
  return (anchor) => {
    let prev: AuditRow | undefined
    for (const row of from.iterate(anchor.seq)) {
      if (!prev) {
        if (row.seq !== anchor.seq) return `the row at seq ${anchor.seq}, the last checkpoint the signer recorded, is gone`
        if (row.hash !== anchor.hash) return `the row at seq ${anchor.seq}, the last checkpoint the signer recorded, no longer has the hash it recorded`
      } else {
        if (row.seq !== prev.seq + 1) return `seq ${prev.seq + 1} is missing after the last checkpoint`
        if (row.prev_hash !== prev.hash) return `the row at seq ${row.seq} does not link to the row before it`
      }
      if (rowHashOf(row) !== row.hash) return `the row at seq ${row.seq} does not hash to the hash it stores`
      prev = row
    }
    return prev ? null : `the row at seq ${anchor.seq}, the last checkpoint the signer recorded, is gone`
  }
}

function rowHashOf(row: AuditRow): string | null {
  if (typeof row.data !== 'string' || typeof row.id !== 'string' || typeof row.intent_id !== 'string' || typeof row.event !== 'string') return null
  if (!Number.isSafeInteger(row.timestamp)) return null
  return auditRowHashFromJcs({ seq: row.seq, id: row.id, timestamp: row.timestamp, intentId: row.intent_id, event: row.event, dataJcs: row.data, prevHash: row.prev_hash })
}
