// Is audit_events the table countersign makes? Every reader and writer asks
// before it touches the rows: a view of that name can be any query (an
// endless recursive CTE never returns), and a table of other columns is no
// log (an append then fails with "no such column: seq", which tells an
// operator nothing). The whole schema (triggers, indexes) is verify's job
// (server/audit/schemaCheck.ts); this is only the table, and lives here
// because the signer, which must not load server/, opens the log too.
import Database from 'better-sqlite3'
import { ensureAuditSchema } from './schema.js'

/** One row of sqlite_master. */
export interface SchemaObject {
  type: string
  name: string
  tbl_name: string
  sql: string | null
}

/**
 * The table as files created by older versions hold it: a UNIQUE constraint
 * on id (schema.ts says why it was dropped).
 */
export const LEGACY_AUDIT_TABLE: SchemaObject = {
  type: 'table',
  name: 'audit_events',
  tbl_name: 'audit_events',
  sql: [
    'CREATE TABLE audit_events (',
    '      seq        INTEGER PRIMARY KEY,',
    '      id         TEXT    NOT NULL UNIQUE,',
    '      timestamp  INTEGER NOT NULL,',
    '      intent_id  TEXT    NOT NULL,',
    '      event      TEXT    NOT NULL,',
    '      data       TEXT    NOT NULL,',
    '      prev_hash  TEXT    NOT NULL,',
    '      hash       TEXT    NOT NULL',
    '    )',
  ].join('\n'),
}

export function readSchema(db: Database.Database): SchemaObject[] {
  return db.prepare<[], SchemaObject>('SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY rowid').all()
}

/** What ensureAuditSchema creates, as SQLite records it: made on a scratch database, so it follows schema.ts. */
export function currentAuditSchema(): SchemaObject[] {
  const db = new Database(':memory:')
  try {
    ensureAuditSchema(db)
    return readSchema(db)
  } finally {
    db.close()
  }
}

export function sameObject(a: SchemaObject, b: SchemaObject): boolean {
  return a.type === b.type && a.name === b.name && a.tbl_name === b.tbl_name && a.sql === b.sql
}

/** The objects named audit_events (SQLite's names ignore case, so "AUDIT_EVENTS" is the same name). */
function auditEventsObjects(found: SchemaObject[]): SchemaObject[] {
  return found.filter((o) => String(o.name).toLowerCase() === 'audit_events')
}

/**
 * Why the file's audit_events is not a table countersign made (today's or
 * the legacy one, its SQL compared exactly), or null when it is. A file
 * without audit_events gets "missing": a writer creates it then, a reader
 * has nothing to read.
 */
export function auditTableProblem(found: SchemaObject[], current: SchemaObject[] = currentAuditSchema()): string | null {
  const table = current.find((o) => o.type === 'table' && o.name === 'audit_events')!
  const named = auditEventsObjects(found)
  if (named.some((o) => sameObject(o, table) || sameObject(o, LEGACY_AUDIT_TABLE))) return null
  if (named.length === 0) return 'audit_events is missing: this file holds no audit log'
  const o = named[0]!
  if (o.type !== 'table') return `audit_events is a ${String(o.type).replace(/[^a-z]/g, '?')}, not the audit log's table: a view can return anything, endlessly too`
  return 'table audit_events is not as countersign creates it (its columns or constraints were changed)'
}

/** True when the file has an object named audit_events at all (a writer creates the table otherwise). */
export function hasAuditEvents(found: SchemaObject[]): boolean {
  return auditEventsObjects(found).length > 0
}

/**
 * Keeps one connection from reading anything but countersign's table under
 * the name audit_events, for as long as it is open. The check when the file
 * is opened does not see a later `ALTER TABLE audit_events RENAME …` and a
 * view created in its place by anyone who can write the file; a recursive
 * view then never returns, and the process's event loop (the signer's, which
 * reads the head every 0.5 s) stopped for good (found by review). SQLite bumps
 * schema_version on every schema change, so the table is checked again only
 * when it moved. Call it inside the transaction that then reads or writes:
 * the check and the statements see one snapshot of the schema.
 */
export function createAuditTableWatch(db: Database.Database, refuse: (problem: string) => Error): () => void {
  let current: SchemaObject[] | undefined
  let checkedVersion: number | null = null
  return () => {
    const version = db.pragma('schema_version', { simple: true }) as number
    if (version === checkedVersion) return
    current ??= currentAuditSchema()
    const problem = auditTableProblem(readSchema(db), current)
    if (problem !== null) throw refuse(problem)
    checkedVersion = version
  }
}
