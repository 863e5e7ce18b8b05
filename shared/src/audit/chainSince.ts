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
export interface ChainCheck {
  /** Why the log no longer continues from `anchor` to its head, or null. */
  (anchor: ChainHead): string | null
  /**
   * The same walk outside the write transaction, remembered: the check made
   * inside it then starts from the row this one reached (its hash checked
   * again) instead of from the anchor, so a signer sealing a busy log holds
   * the write lock for a few rows, not for every row since its last checkpoint.
   */
  advance(anchor: ChainHead): void
}

export function createChainCheck(db: Database.Database): ChainCheck {
  const from = db.prepare<[number], AuditRow>('SELECT * FROM audit_events WHERE seq >= ? ORDER BY seq')
  const at = db.prepare<[number], AuditRow>('SELECT * FROM audit_events WHERE seq = ?')
  // The furthest row a walk from `anchor` found intact (rows between were linked and hashed then).
  let reached: { anchor: ChainHead; tip: ChainHead } | null = null

  function rowProblem(row: AuditRow | undefined, expected: ChainHead, what: string): string | null {
    if (!row) return `the row at seq ${expected.seq}, ${what}, is gone`
    if (row.hash !== expected.hash || rowHashOf(row) !== row.hash) return `the row at seq ${expected.seq}, ${what}, no longer has the hash it recorded`
    return null
  }

  function walk(anchor: ChainHead): string | null {
    const anchorProblem = rowProblem(at.get(anchor.seq), anchor, 'the last checkpoint the signer wrote')
    if (anchorProblem) return anchorProblem
    // A walk already made from this anchor: start where it ended, if that row is still what it was.
    const resume = reached && reached.anchor.seq === anchor.seq && reached.anchor.hash === anchor.hash ? reached.tip : anchor
    if (resume !== anchor && rowProblem(at.get(resume.seq), resume, 'checked before') !== null) {
      reached = null
      return walk(anchor)
    }
    let prev: AuditRow | undefined
    for (const row of from.iterate(resume.seq)) {
      if (prev) {
        if (row.seq !== prev.seq + 1) return `seq ${prev.seq + 1} is missing after the last checkpoint`
        if (row.prev_hash !== prev.hash) return `the row at seq ${row.seq} does not link to the row before it`
        if (rowHashOf(row) !== row.hash) return `the row at seq ${row.seq} does not hash to the hash it stores`
      }
      prev = row
    }
    if (prev) reached = { anchor, tip: { seq: prev.seq, hash: prev.hash } }
    return null
  }

  const check = ((anchor: ChainHead) => walk(anchor)) as ChainCheck
  check.advance = (anchor) => {
    walk(anchor)
  }
  return check
}

function rowHashOf(row: AuditRow): string | null {
  if (typeof row.data !== 'string' || typeof row.id !== 'string' || typeof row.intent_id !== 'string' || typeof row.event !== 'string') return null
  if (!Number.isSafeInteger(row.timestamp)) return null
  return auditRowHashFromJcs({ seq: row.seq, id: row.id, timestamp: row.timestamp, intentId: row.intent_id, event: row.event, dataJcs: row.data, prevHash: row.prev_hash })
}
