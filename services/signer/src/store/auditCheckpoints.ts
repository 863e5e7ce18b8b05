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
  /**
   * The newest row of the log at or below `seq` that a recorded checkpoint
   * vouches for: a row one sealed (its head) or a checkpoint row itself, with
   * the hash it had. null when none is recorded that far down.
   */
  newestVouchedAtOrBelow(seq: number): { seq: number; hash: string; writtenAt: number } | null
  /** Whether the history holds nothing yet (a signer.db from before it). */
  historyEmpty(): boolean
  /** Adds sealed rows to the history as checkpoints' signed data names them (the backfill after an upgrade), in one transaction; one already there stays. */
  rememberSealed(heads: ReadonlyArray<{ seq: number; hash: string; writtenAt: number }>): void
}

/** The history keeps every checkpoint of the last day, and before that the first of each hour: a backup's head is vouched for to within the hour. */
export const HISTORY_KEEP_ALL_MS = 24 * 3_600_000
const HISTORY_THIN_EVERY = 1000

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
  // Keyed by the sealed row: a re-anchor drops the rows of a timeline the log no longer holds (reanchor), so one seq names one row.
  const remember = db.prepare('INSERT OR REPLACE INTO audit_checkpoint_history (head_seq, head_hash, seq, hash, written_at) VALUES (?, ?, ?, ?, ?)')
  const forgetAbove = db.prepare('DELETE FROM audit_checkpoint_history WHERE head_seq >= ? OR seq >= ?')
  type Vouched = { seq: number; hash: string; written_at: number }
  const newestHead = db.prepare<[number], Vouched>('SELECT head_seq AS seq, head_hash AS hash, written_at FROM audit_checkpoint_history WHERE head_seq <= ? ORDER BY head_seq DESC LIMIT 1')
  const newestRow = db.prepare<[number], Vouched>('SELECT seq, hash, written_at FROM audit_checkpoint_history WHERE seq <= ? ORDER BY seq DESC LIMIT 1')
  // Older than a day: one a clock hour (the first), so the table grows by about 24 rows a day, not one row a signature.
  const thin = db.prepare(
    `DELETE FROM audit_checkpoint_history WHERE written_at < @cutoff AND head_seq NOT IN
       (SELECT MIN(head_seq) FROM audit_checkpoint_history WHERE written_at < @cutoff GROUP BY written_at / 3600000)`,
  )
  let recorded = 0
  // One commit, as the record alone was: this runs once a checkpoint, on the signer's path.
  const recordBoth = db.transaction((cp: WrittenCheckpoint, nowMs: number) => {
    upsert.run(cp.seq, cp.hash, cp.sealed.seq, cp.sealed.hash, nowMs)
    remember.run(cp.sealed.seq, cp.sealed.hash, cp.seq, cp.hash, nowMs)
    if (++recorded % HISTORY_THIN_EVERY === 0) thin.run({ cutoff: nowMs - HISTORY_KEEP_ALL_MS })
  })
  const anyHistory = db.prepare<[], number>('SELECT 1 FROM audit_checkpoint_history LIMIT 1').pluck()
  const rememberOnce = db.prepare('INSERT OR IGNORE INTO audit_checkpoint_history (head_seq, head_hash, seq, hash, written_at) VALUES (?, ?, ?, ?, ?)')
  const replace = db.prepare(
    `INSERT OR REPLACE INTO ${SIGNER_CHECKPOINT_TABLE} (id, seq, hash, head_seq, head_hash, written_at) VALUES (1, ?, ?, ?, ?, ?)`,
  )
  const get = db.prepare<[], Row>(`SELECT seq, hash, head_seq, head_hash, written_at FROM ${SIGNER_CHECKPOINT_TABLE} WHERE id = 1`)
  return {
    record: recordBoth,
    reanchor(cp, nowMs) {
      // What was recorded at and past the new checkpoint's rows belongs to rows the log no longer holds.
      forgetAbove.run(cp.sealed.seq, cp.sealed.seq)
      replace.run(cp.seq, cp.hash, cp.sealed.seq, cp.sealed.hash, nowMs)
      remember.run(cp.sealed.seq, cp.sealed.hash, cp.seq, cp.hash, nowMs)
    },
    historyEmpty() {
      return anyHistory.get() === undefined
    },
    rememberSealed: db.transaction((heads: ReadonlyArray<{ seq: number; hash: string; writtenAt: number }>) => {
      // The checkpoint row's own seq and hash are not taken from the file: only what the signature covers.
      for (const h of heads) rememberOnce.run(h.seq, h.hash, h.seq, h.hash, h.writtenAt)
    }),
    newestVouchedAtOrBelow(seq) {
      // The latest checkpoint's own record too: a signer.db from before the history has only that one.
      const latest = get.get()
      const candidates: Vouched[] = [newestHead.get(seq), newestRow.get(seq)].filter((v): v is Vouched => v !== undefined)
      if (latest) {
        if (latest.seq <= seq) candidates.push({ seq: latest.seq, hash: latest.hash, written_at: latest.written_at })
        if (latest.head_seq <= seq) candidates.push({ seq: latest.head_seq, hash: latest.head_hash, written_at: latest.written_at })
      }
      const newest = candidates.reduce<Vouched | null>((a, b) => (a === null || b.seq > a.seq ? b : a), null)
      return newest && { seq: newest.seq, hash: newest.hash, writtenAt: newest.written_at }
    },
    latest() {
      const r = get.get()
      return r ? { seq: r.seq, hash: r.hash, sealed: { seq: r.head_seq, hash: r.head_hash }, writtenAt: r.written_at } : null
    },
  }
}
