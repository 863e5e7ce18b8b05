import Database from 'better-sqlite3'
import { CHECKPOINT_EVENT, checkpointSignatureValid, readCheckpointData } from '@countersign/shared'
import type { AuditCheckpoints } from '../store/auditCheckpoints.js'
import type { AuditKey } from './auditKey.js'

/**
 * A signer.db from before audit_checkpoint_history has recorded only its
 * latest checkpoint: nothing would vouch for the rows sealed before the
 * upgrade, and a re-anchor took a log rewritten under them with its
 * checkpoints stripped (found by review). Once, at the first start with an
 * empty history, it is filled from the checkpoint rows audit.db holds up to
 * the recorded one whose signature the audit key made: each names the row it
 * sealed and that row's hash, which is all the history keeps, so a row later
 * rewritten or a checkpoint later removed does not change what was recorded.
 * Returns how many were added. One read of the log's checkpoint rows.
 */
export function backfillCheckpointHistory(auditFile: string, key: AuditKey, checkpoints: AuditCheckpoints): number {
  const latest = checkpoints.latest()
  if (!latest || !checkpoints.historyEmpty()) return 0
  const db = new Database(auditFile, { readonly: true, fileMustExist: true })
  const heads: Array<{ seq: number; hash: string; writtenAt: number }> = []
  try {
    const rows = db.prepare<[string, number], { data: string; timestamp: number }>('SELECT data, timestamp FROM audit_events WHERE event = ? AND seq <= ? ORDER BY seq')
    for (const r of rows.iterate(CHECKPOINT_EVENT, latest.seq)) {
      let cp
      try {
        cp = readCheckpointData(JSON.parse(r.data))
      } catch {
        continue // a broken row: verify names it
      }
      if (!cp || cp.key !== key.fingerprint || !checkpointSignatureValid(key.publicKey, cp.seq, cp.headHash, cp.signature)) continue
      heads.push({ seq: cp.seq, hash: cp.headHash, writtenAt: Number(r.timestamp) })
    }
  } finally {
    db.close()
  }
  checkpoints.rememberSealed(heads)
  return heads.length
}
