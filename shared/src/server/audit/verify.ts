import type { KeyObject } from 'node:crypto'
import Database from 'better-sqlite3'
import { auditKeyFingerprint, CHECKPOINT_EVENT, checkpointSignatureValid, readCheckpointData, type LatestCheckpoint } from '../../audit/checkpoint.js'
import { GENESIS_HASH, type AuditRow } from '../../audit/schema.js'
import { assertDatabaseFile } from '../../files/privateFiles.js'
import { rowContentProblem } from './rowChecks.js'

/** Which kind of problem verify found first. */
export type AuditProblemKind = 'broken_row' | 'bad_checkpoint' | 'truncated'

export type AuditVerification =
  | {
      ok: true
      rows: number
      /** Checkpoint rows seen (their signatures checked when a key was given). */
      checkpoints: number
      /** seq of the newest checkpoint row, 0 when there is none. */
      lastCheckpointSeq: number
    }
  | { ok: false; rows: number; firstBadSeq: number; problem: string; kind: AuditProblemKind }

export interface AuditAnchor {
  /** The signer's public audit key (audit-key.pub): every checkpoint must carry its valid signature. */
  publicKey: KeyObject
  /** The signer's latest checkpoint (signer.db); null when it has recorded none. */
  latest: LatestCheckpoint | null
}

/**
 * Walks the chain in seq order: sequence numbers must be 1, 2, 3…, each row
 * must link to the previous row's hash, each row's data must be stored as
 * canonical JSON, and each stored hash must match the row as stored (see
 * rowChecks.ts). With an anchor, every checkpoint row must seal the row
 * before it with a valid signature of the signer's audit key, and the log
 * must reach the signer's latest checkpoint, unchanged. Reports the first
 * problem found, in seq order (a log that is merely short is reported after
 * the walk).
 */
export function verifyAuditChain(file: string, anchor?: AuditAnchor): AuditVerification {
  assertDatabaseFile(file)
  const db = new Database(file, { readonly: true, fileMustExist: true })
  const fingerprint = anchor ? auditKeyFingerprint(anchor.publicKey) : null
  try {
    const rows = db.prepare<[], AuditRow>('SELECT * FROM audit_events ORDER BY seq ASC').iterate()
    let expectedSeq = 1
    let prevHash = GENESIS_HASH
    let count = 0
    let checkpoints = 0
    let lastCheckpointSeq = 0
    for (const r of rows) {
      const bad = (problem: string, kind: AuditProblemKind = 'broken_row'): AuditVerification => ({ ok: false, rows: count, firstBadSeq: r.seq, problem, kind })
      if (r.seq !== expectedSeq) return bad(`expected row ${expectedSeq} next, found ${r.seq} (rows deleted or inserted)`)
      if (r.prev_hash !== prevHash) return bad('its link does not match the previous row (a row before it was changed, removed or reordered)')
      const content = rowContentProblem(r)
      if (content !== null) return bad(content)
      // Canonical JSON of an object by now (rowContentProblem).
      const data: unknown = JSON.parse(r.data)
      if (r.event === CHECKPOINT_EVENT) {
        checkpoints += 1
        lastCheckpointSeq = r.seq
        if (anchor) {
          const cp = readCheckpointData(data)
          if (!cp) return bad('bad checkpoint signature: the checkpoint row has no {seq, headHash, key, signature}', 'bad_checkpoint')
          if (cp.seq !== r.seq - 1 || cp.headHash !== r.prev_hash) {
            return bad(`bad checkpoint: it seals row ${cp.seq} with hash ${cp.headHash}, but the row before it is ${r.seq - 1} with hash ${r.prev_hash} (rows before it were rewritten)`, 'bad_checkpoint')
          }
          if (cp.key !== fingerprint) return bad(`bad checkpoint signature: signed by key ${cp.key}, not by the audit key ${fingerprint}`, 'bad_checkpoint')
          if (!checkpointSignatureValid(anchor.publicKey, cp.seq, cp.headHash, cp.signature)) {
            return bad('bad checkpoint signature: the signature does not verify with the audit key (the checkpoint was forged or rows before it were rewritten)', 'bad_checkpoint')
          }
        }
      }
      if (anchor?.latest && r.seq === anchor.latest.seq && r.hash !== anchor.latest.hash) {
        return bad(`this row is not the signer's latest checkpoint (signer.db has hash ${anchor.latest.hash} for seq ${r.seq}): the log was rewritten`, 'bad_checkpoint')
      }
      prevHash = r.hash
      expectedSeq += 1
      count += 1
    }
    if (anchor?.latest && count < anchor.latest.seq) {
      return {
        ok: false,
        rows: count,
        firstBadSeq: count + 1,
        kind: 'truncated',
        problem: `the log ends at seq ${count}, before the signer's latest checkpoint at seq ${anchor.latest.seq} (rows were deleted from its end)`,
      }
    }
    if (anchor && !anchor.latest && checkpoints > 0) {
      return { ok: false, rows: count, firstBadSeq: lastCheckpointSeq, kind: 'bad_checkpoint', problem: `the log holds ${checkpoints} checkpoints but signer.db records none (not this signer's log, or its signer.db was replaced)` }
    }
    return { ok: true, rows: count, checkpoints, lastCheckpointSeq }
  } finally {
    db.close()
  }
}
