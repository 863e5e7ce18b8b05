// The database objects of audit.db, against what countersign creates. A
// trigger, view or index added by whoever can write the file changes what is
// written or read without touching a row: a BEFORE INSERT trigger that
// RAISE(IGNORE)s an event makes its appends vanish while every writer reports
// success, and the chain of the rows that remain is whole. verify therefore
// accepts only the objects ensureAuditSchema makes (their SQL as SQLite
// records it, compared exactly) and those older versions made, and requires
// the append-only triggers.
import { currentAuditSchema, LEGACY_AUDIT_TABLE as LEGACY_TABLE, sameObject, type SchemaObject } from '../../audit/tableCheck.js'
import { escapeForDisplay } from '../display/escape.js'

export { auditTableProblem, currentAuditSchema, readSchema, type SchemaObject } from '../../audit/tableCheck.js'

/**
 * What files created by older versions also hold (schema.ts says why they
 * were dropped): with the table with a UNIQUE constraint on id
 * (LEGACY_AUDIT_TABLE), the index SQLite makes and names itself for it (no
 * SQL), and an index by (intent_id, seq).
 */
const LEGACY_UNIQUE_ID_INDEX: SchemaObject = { type: 'index', name: 'sqlite_autoindex_audit_events_1', tbl_name: 'audit_events', sql: null }
const LEGACY_INTENT_INDEX: SchemaObject = {
  type: 'index',
  name: 'audit_events_by_intent',
  tbl_name: 'audit_events',
  sql: 'CREATE INDEX audit_events_by_intent ON audit_events (intent_id, seq)',
}

/** The objects a file may hold: today's, and the legacy ones (the UNIQUE index only with the table that makes it). */
function acceptedObjects(current: SchemaObject[], found: SchemaObject[]): SchemaObject[] {
  const legacyTable = found.some((o) => sameObject(o, LEGACY_TABLE))
  return [...current, LEGACY_TABLE, LEGACY_INTENT_INDEX, ...(legacyTable ? [LEGACY_UNIQUE_ID_INDEX] : [])]
}

/**
 * The object named in words, with its SQL (shortened) so the operator sees
 * what it does. Every part is the file's own text, which whoever planted the
 * object chose: escaped, so that a name carrying terminal escapes cannot
 * draw a line of its own (a fake "audit chain OK") on the operator's screen.
 */
function describeObject(o: SchemaObject): string {
  const on = o.tbl_name !== o.name ? ` on ${escapeForDisplay(String(o.tbl_name))}` : ''
  const sql = o.sql === null ? '' : `: ${escapeForDisplay(String(o.sql).replace(/\s+/g, ' ').slice(0, 300))}`
  return `${escapeForDisplay(String(o.type))} ${escapeForDisplay(String(o.name))}${on}${sql}`
}

/**
 * Why the file's objects are not the audit log's, in words, one entry each;
 * empty when they are. `found` is the file's sqlite_master.
 */
export function schemaProblems(found: SchemaObject[], current: SchemaObject[] = currentAuditSchema()): string[] {
  const accepted = acceptedObjects(current, found)
  const problems: string[] = []
  for (const o of found) {
    if (accepted.some((a) => sameObject(a, o))) continue
    const known = accepted.some((a) => a.type === o.type && a.name === o.name)
    problems.push(
      known
        ? `${describeObject(o)} is not as countersign creates it (it can change what is written to or read from the log)`
        : `${describeObject(o)} is not one countersign creates (it can change what is written to or read from the log)`,
    )
  }
  for (const t of current.filter((o) => o.type === 'trigger')) {
    if (found.some((o) => o.type === 'trigger' && o.name === t.name)) continue
    // Every countersign process creates it when it opens the log: it was dropped since.
    problems.push(`trigger ${t.name} is missing: the append-only triggers keep rows from being changed or deleted, and this one was dropped`)
  }
  return problems
}
