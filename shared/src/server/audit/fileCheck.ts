// Is the database file itself sound, as SQLite sees its pages? verify's
// checks are about rows; a damaged page (a torn write, a disk fault, bytes of
// the file edited rather than rows) makes SQLite read rows wrong or not at
// all, and the walk then blames an edit, reports rows deleted, misses rows at
// the end (a leaf page whose cell count shrank: the hash chain of what
// remains is whole) or stops with SQLite's "database disk image is
// malformed". So every file verify reads is checked page by page first.
//
// integrity_check, not quick_check: quick_check does not compare indexes
// with the table, and the (intent_id, seq) index of files made by older
// versions (schemaCheck.ts) answers the services' lookups by intent. One
// changed byte of an index key left quick_check "ok" while integrity_check
// found the rows missing from the index that those lookups then skip. Cost on
// 100,000 audit rows: the same 35 ms as quick_check for today's layout (no
// index to compare), 164 ms against 57 ms for the legacy one, beside about
// 850 ms for the walk itself.
import type Database from 'better-sqlite3'
import { OperatorError } from '../../operatorError.js'
import { escapeForDisplay } from '../display/escape.js'

/** How many of SQLite's findings a problem quotes: a single bad page yields dozens, and the first say where. */
export const QUOTED_FINDINGS = 3

/** A database verify reads is damaged; `problem` names the file and says what SQLite found. */
export class DamagedDatabaseError extends OperatorError {
  override name = 'DamagedDatabaseError'
  constructor(readonly problem: string) {
    super(problem)
  }
}

/**
 * Why the file is not sound, in words naming it, or null when SQLite finds
 * nothing wrong. A file SQLite cannot even check (not a database at all, a
 * header it cannot read) is reported the same way.
 */
export function databaseFileProblem(db: Database.Database, file: string): string | null {
  let lines: string[]
  try {
    // One more than quoted: tells "and more" from exactly QUOTED_FINDINGS.
    lines = db.prepare<[], string>(`PRAGMA integrity_check(${QUOTED_FINDINGS + 1})`).pluck().all()
  } catch (err) {
    const problem = databaseDamageProblem(err, file)
    if (problem === null) throw err
    return problem
  }
  if (lines.length === 1 && lines[0] === 'ok') return null
  // One result row can hold several findings, one a line, after a "*** in database main ***" heading.
  const findings = lines.flatMap((l) => String(l).split('\n')).filter((f) => f !== '' && !/^\*\*\* in database \w+ \*\*\*$/.test(f))
  const quoted = findings.slice(0, QUOTED_FINDINGS).map((f) => `"${f}"`)
  const more = findings.length > QUOTED_FINDINGS ? '; and more' : ''
  return escapeForDisplay(
    `${file} is damaged: SQLite's integrity_check found ${quoted.join('; ')}${more}. Its pages are not as SQLite wrote them, so rows may read wrong or not at all; ${RESTORE}`,
  )
}

const RESTORE = 'restore it from a backup'

/**
 * The problem for an error SQLite raised because the file is damaged or no
 * database (SQLITE_CORRUPT and its extended codes, SQLITE_NOTADB), or null
 * for any other error, which is not the file's to answer for.
 */
export function databaseDamageProblem(err: unknown, file: string): string | null {
  const code = (err as { code?: unknown } | null)?.code
  if (typeof code !== 'string' || !(code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT'))) return null
  const said = `${code}: ${(err as Error).message}`
  // The path, and SQLite's findings (which quote index names), reach a terminal: escaped.
  if (code === 'SQLITE_NOTADB') return escapeForDisplay(`${file} is not a SQLite database, or its header is damaged (${said}); ${RESTORE}`)
  return escapeForDisplay(`${file} is damaged: SQLite could not read it (${said}); ${RESTORE}`)
}
