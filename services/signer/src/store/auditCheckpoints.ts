import type Database from 'better-sqlite3'
import { SIGNER_CHECKPOINT_TABLE, type WrittenCheckpoint } from '@countersign/shared'

export interface RecordedCheckpoint extends WrittenCheckpoint {
  writtenAt: number
}

/** The signer's latest audit checkpoint, kept in signer.db where no other process can write. */
export interface AuditCheckpoints {
  record(cp: WrittenCheckpoint, nowMs: number): void
  /**
   * Records `cp` whatever seq the one before had: only for a re-anchor
   * (cli/auditReanchor.ts), whose checkpoint may sit at a lower seq than the
   * recorded one when the log was restored from a backup or cut short.
   */
  reanchor(cp: WrittenCheckpoint, nowMs: number): void
  latest(): RecordedCheckpoint | null
}

interface Row {
  seq: number
  hash: string
  head_seq: number
  head_hash: string
  written_at: number
}

export function createAuditCheckpoints(db: Database.Database): AuditCheckpoints {
  // Never moves backwards: a checkpoint committed earlier but recorded late cannot replace a newer one.
  const upsert = db.prepare(
    `INSERT INTO ${SIGNER_CHECKPOINT_TABLE} (id, seq, hash, head_seq, head_hash, written_at) VALUES (1, ?, ?, ?, ?, ?)
     ON CONFLICT (id) DO UPDATE SET seq = excluded.seq, hash = excluded.hash, head_seq = excluded.head_seq,
       head_hash = excluded.head_hash, written_at = excluded.written_at
     WHERE excluded.seq > ${SIGNER_CHECKPOINT_TABLE}.seq`,
  )
  const replace = db.prepare(
    `INSERT OR REPLACE INTO ${SIGNER_CHECKPOINT_TABLE} (id, seq, hash, head_seq, head_hash, written_at) VALUES (1, ?, ?, ?, ?, ?)`,
  )
  const get = db.prepare<[], Row>(`SELECT seq, hash, head_seq, head_hash, written_at FROM ${SIGNER_CHECKPOINT_TABLE} WHERE id = 1`)
  return {
    record(cp, nowMs) {
      upsert.run(cp.seq, cp.hash, cp.sealed.seq, cp.sealed.hash, nowMs)
    },
    reanchor(cp, nowMs) {
      replace.run(cp.seq, cp.hash, cp.sealed.seq, cp.sealed.hash, nowMs)
    },
    latest() {
      const r = get.get()
      return r ? { seq: r.seq, hash: r.hash, sealed: { seq: r.head_seq, hash: r.head_hash }, writtenAt: r.written_at } : null
    },
  }
}
