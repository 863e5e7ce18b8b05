import type Database from 'better-sqlite3'

export const GENESIS_HASH = `0x${'0'.repeat(64)}`

/**
 * audit_events is append-only: triggers abort any UPDATE or DELETE, and each
 * row carries the hash of the previous row, so an edit made around the
 * triggers (dropping them, editing the file) breaks the chain that
 * `countersign-audit verify` walks.
 *
 * `id` is a random UUID that nothing looks up, so it has no index: a UNIQUE
 * constraint kept a second B-tree keyed by random strings, the most
 * expensive part of every insert (about 15 us of the writer's 35 us a row).
 * Files created with that constraint keep it; both layouts read and verify
 * the same.
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
    CREATE INDEX IF NOT EXISTS audit_events_by_intent ON audit_events (intent_id, seq);
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
