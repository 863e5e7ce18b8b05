// The attacks of issue #14 on audit.db, done the way an attacker with write
// access to the file would: drop the append-only triggers, change what they
// want, recompute every later row's hash with the project's own function, so
// the hash chain alone verifies again, and put the triggers back.
import Database from 'better-sqlite3'
import { canonicalize } from '../../canonical/jcs.js'
import { auditRowHashFromJcs } from '../../audit/rowHash.js'
import { ensureAuditSchema, GENESIS_HASH, type AuditRow } from '../../audit/schema.js'

function openWithoutTriggers(file: string): Database.Database {
  const db = new Database(file)
  db.pragma('busy_timeout = 5000')
  db.exec('DROP TRIGGER IF EXISTS audit_events_no_update; DROP TRIGGER IF EXISTS audit_events_no_delete;')
  return db
}

/** Puts the append-only triggers back, as a careful attacker would (verify reports them missing), and closes. */
function restoreTriggersAndClose(db: Database.Database): void {
  try {
    ensureAuditSchema(db)
  } finally {
    db.close()
  }
}

/**
 * Re-links and re-hashes every row from `fromSeq` on (after edits or
 * deletions), hashing each row's data text as stored, as the writer does.
 */
function rehashFrom(db: Database.Database, fromSeq: number): number {
  const prev = db.prepare<[number], { hash: string }>('SELECT hash FROM audit_events WHERE seq = ?').get(fromSeq - 1)
  let prevHash = prev?.hash ?? GENESIS_HASH
  const rows = db.prepare<[number], AuditRow>('SELECT * FROM audit_events WHERE seq >= ? ORDER BY seq').all(fromSeq)
  const update = db.prepare('UPDATE audit_events SET prev_hash = ?, hash = ? WHERE seq = ?')
  for (const r of rows) {
    const hash = auditRowHashFromJcs({ seq: r.seq, id: r.id, timestamp: r.timestamp, intentId: r.intent_id, event: r.event, dataJcs: r.data, prevHash })
    update.run(prevHash, hash, r.seq)
    prevHash = hash
  }
  return rows.length
}

/**
 * Replaces the data of row `seq` with `edit(data)`, stored as canonical JSON
 * as an append would, and recomputes the hash of that row and every later
 * one. Returns how many rows were re-hashed.
 */
export function rewriteAuditRow(file: string, seq: number, edit: (data: Record<string, unknown>) => Record<string, unknown>): number {
  const db = openWithoutTriggers(file)
  try {
    return db.transaction(() => {
      const row = db.prepare<[number], AuditRow>('SELECT * FROM audit_events WHERE seq = ?').get(seq)
      if (!row) throw new Error(`no row ${seq}`)
      db.prepare('UPDATE audit_events SET data = ? WHERE seq = ?').run(canonicalize(edit(JSON.parse(row.data) as Record<string, unknown>)), seq)
      return rehashFrom(db, seq)
    })()
  } finally {
    restoreTriggersAndClose(db)
  }
}

/** Deletes the newest `n` rows (the chain that is left still links). */
export function truncateAudit(file: string, n: number): void {
  const db = openWithoutTriggers(file)
  try {
    db.prepare('DELETE FROM audit_events WHERE seq > (SELECT MAX(seq) FROM audit_events) - ?').run(n)
  } finally {
    restoreTriggersAndClose(db)
  }
}

/**
 * Deletes every checkpoint row and renumbers, re-links and re-hashes the rest:
 * a consistent chain with no checkpoint left in it.
 */
export function stripCheckpoints(file: string): void {
  const db = openWithoutTriggers(file)
  try {
    db.transaction(() => {
      db.prepare("DELETE FROM audit_events WHERE event = 'checkpoint'").run()
      const seqs = db.prepare<[], { seq: number }>('SELECT seq FROM audit_events ORDER BY seq').all()
      const move = db.prepare('UPDATE audit_events SET seq = ? WHERE seq = ?')
      seqs.forEach((r, i) => move.run(-(i + 1), r.seq))
      db.prepare('UPDATE audit_events SET seq = -seq WHERE seq < 0').run()
      rehashFrom(db, 1)
    })()
  } finally {
    restoreTriggersAndClose(db)
  }
}

/**
 * Runs `edit` on audit.db with the triggers dropped, then, when `rehashFromSeq`
 * is given, renumbers nothing but re-links and re-hashes every row from that
 * seq on: any change an attacker with the file could make, with or without
 * covering its tracks in the hash chain.
 */
export function tamperAudit(file: string, edit: (db: Database.Database) => void, rehashFromSeq?: number): void {
  const db = openWithoutTriggers(file)
  try {
    db.transaction(() => {
      edit(db)
      if (rehashFromSeq !== undefined) rehashFrom(db, rehashFromSeq)
    })()
  } finally {
    restoreTriggersAndClose(db)
  }
}

/**
 * Appends one row as anyone who can write audit.db can, without dropping a
 * trigger: a plain INSERT after the newest row, with whatever column values
 * (SQLite keeps each value's own type: a number, NULL or a blob goes in as such).
 */
export function insertRawAuditRow(file: string, row: { seq?: number; id?: unknown; timestamp?: unknown; intentId?: unknown; event?: unknown; data?: unknown }): number {
  const db = new Database(file)
  try {
    db.pragma('busy_timeout = 5000')
    const last = db.prepare<[], { seq: number; hash: string }>('SELECT seq, hash FROM audit_events ORDER BY seq DESC LIMIT 1').get()
    const seq = row.seq ?? (last?.seq ?? 0) + 1
    const value = (v: unknown, fallback: unknown) => (v === undefined ? fallback : v)
    db.prepare('INSERT INTO audit_events (seq, id, timestamp, intent_id, event, data, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)').run(
      seq,
      value(row.id, `inserted-${seq}`),
      value(row.timestamp, Date.now()),
      value(row.intentId, 'system'),
      value(row.event, 'inserted'),
      value(row.data, '{}'),
      last?.hash ?? GENESIS_HASH,
      `0x${'ee'.repeat(32)}`,
    )
    return seq
  } finally {
    db.close()
  }
}
