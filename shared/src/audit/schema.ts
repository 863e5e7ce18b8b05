import type Database from 'better-sqlite3'

export const GENESIS_HASH = `0x${'0'.repeat(64)}`

/**
 * audit_events is append-only: triggers abort any UPDATE or DELETE, and each
 * row carries the hash of the previous row, so an edit made around the
 * triggers (dropping them, editing the file) breaks the chain that
 * `countersign-audit verify` walks.
 *
 * The only index is the row order (seq). `id` and `intent_id` are random
 * UUIDs: a B-tree keyed by either takes each insert to a random page, which
 * then goes whole into the WAL of a synchronous=FULL commit. The UNIQUE
 * constraint on `id` cost about 15 us of the writer's 35 us a row and an
 * (intent_id, seq) index about 8 us more, for lookups nothing in the services
 * makes (history and the dashboard read the newest rows by seq). Reading one
 * intent's events scans the table. Files created with either keep them; all
 * layouts read and verify the same.
 */
export function ensureAuditSchema(db: Database.Database): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS audit_events (
      seq        INTEGER PRIMARY KEY,
      id         TEXT    NOT NULL,
      timestamp  INTEGER NOT NULL,
      intent_id  TEXT    NOT NULL,
      event      TEXT    NOT NULL,
      data       TEXT    NOT NULL,
      prev_hash  TEXT    NOT NULL,
      hash       TEXT    NOT NULL
    );
    CREATE TRIGGER IF NOT EXISTS audit_events_no_update BEFORE UPDATE ON audit_events
      BEGIN SELECT RAISE(ABORT, 'audit log is append-only: UPDATE refused'); END;
    CREATE TRIGGER IF NOT EXISTS audit_events_no_delete BEFORE DELETE ON audit_events
      BEGIN SELECT RAISE(ABORT, 'audit log is append-only: DELETE refused'); END;
  `)
}

export interface AuditRow {
  seq: number
  id: string
  timestamp: number
  intent_id: string
  event: string
  data: string
  prev_hash: string
  hash: string
}
