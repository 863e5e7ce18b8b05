// What verify asks of one row's own content. The writer stores an event's
// data as canonical JSON (JCS) and hashes that stored text
// (auditRowHashFromJcs), so verify hashes the text as stored, never a parse
// of it: JSON text can say the same object many ways (spaces, escapes, 1e0
// for 1) and can say contradictory things (a key given twice, of which
// JSON.parse keeps the last and SQLite's json_extract the first). Only the
// one canonical text of the data passes, so every reader sees what was hashed.
import { canonicalize } from '../../canonical/jcs.js'
import { auditRowHashFromJcs } from '../../audit/rowHash.js'
import type { AuditRow } from '../../audit/schema.js'

const EDITED = 'the row was edited'

/** The text columns, as every append writes them; SQLite keeps whatever type a hand-made row put in. */
const TEXT_COLUMNS = ['id', 'intent_id', 'event', 'data', 'prev_hash', 'hash'] as const

/**
 * Why a column holds another type than the one every append writes, or null.
 * Checked before hashing: the hash is built from the columns as text, so a
 * timestamp stored as the text '1700000000000' would hash like the number.
 */
export function columnTypeProblem(r: AuditRow): string | null {
  for (const column of TEXT_COLUMNS) {
    if (typeof r[column] !== 'string') return `its ${column} is not text, as every append writes it: ${EDITED}`
  }
  if (!Number.isSafeInteger(r.timestamp)) return `its timestamp is not a whole number of milliseconds, as every append writes it: ${EDITED}`
  return null
}

/** The SQL that reads a row with the bytes of each text column beside it (`<column>_bytes`), for textBytesProblem. */
export const ROWS_WITH_TEXT_BYTES = `SELECT *, ${TEXT_COLUMNS.map((c) => `CAST(${c} AS BLOB) AS ${c}_bytes`).join(', ')} FROM audit_events ORDER BY seq ASC`

/**
 * Why a text column's stored bytes are not the UTF-8 of the text read from
 * them, or null. SQLite stores text as it is given; reading it, Node turns
 * each invalid UTF-8 sequence into U+FFFD, so a row stored with U+FFFD
 * (EF BF BD, from a client's description) could have those bytes swapped for
 * FF: the same text here, and the same hash, while sqlite3, json_extract and
 * other readers see other bytes (found by review).
 */
export function textBytesProblem(r: AuditRow & Record<string, unknown>): string | null {
  for (const column of TEXT_COLUMNS) {
    const text = r[column]
    const bytes = r[`${column}_bytes`]
    if (typeof text !== 'string' || !Buffer.isBuffer(bytes)) continue
    if (!Buffer.from(text, 'utf8').equals(bytes)) return `its ${column} is not stored as valid UTF-8, as every append writes it (readers other than Node see other bytes than its hash covers): ${EDITED}`
  }
  return null
}

/** Why the stored data is not the canonical JSON object every append stores, or null. */
export function storedDataProblem(text: string): string | null {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return `its data is not valid JSON: ${EDITED}`
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return `its data is not a JSON object, as every append writes it: ${EDITED}`
  let canonical: string
  try {
    canonical = canonicalize(parsed)
  } catch (err) {
    // A number JSON.parse reads as Infinity (1e400): no append writes one.
    return `its data cannot be canonicalised (${(err as Error).message}): ${EDITED}`
  }
  if (canonical !== text) {
    return `its data is not stored as the canonical JSON every append writes (a key given twice, added spaces, escapes or numbers written another way), so readers can see other values than its hash covers: ${EDITED}`
  }
  return null
}

/** The hash the writer stored for this row: over the data text exactly as stored. */
export function storedRowHash(r: AuditRow): string {
  return auditRowHashFromJcs({ seq: r.seq, id: r.id, timestamp: r.timestamp, intentId: r.intent_id, event: r.event, dataJcs: r.data, prevHash: r.prev_hash })
}

/** What is wrong with the row's own content (its columns, its data, its hash), or null. */
export function rowContentProblem(r: AuditRow): string | null {
  const problem = columnTypeProblem(r) ?? storedDataProblem(r.data)
  if (problem !== null) return problem
  if (storedRowHash(r) !== r.hash) return `its content does not match its hash: ${EDITED}`
  return null
}
