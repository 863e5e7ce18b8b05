import Database from 'better-sqlite3'
import { assertDatabaseFile, createPrivateFileIfMissing, databaseOpenError, databaseTarget } from '../files/privateFiles.js'
import { auditRowHashFromJcs } from './rowHash.js'
import { ensureAuditSchema, GENESIS_HASH } from './schema.js'
import { auditTableProblem, createAuditTableWatch, hasAuditEvents, readSchema } from './tableCheck.js'
import { OperatorError } from '../operatorError.js'

/** How long a writer waits for another process's write lock before giving up. */
export const DEFAULT_AUDIT_BUSY_TIMEOUT_MS = 5000

/**
 * `synchronous`: FULL fsyncs inside every commit; NORMAL leaves the fsync to
 * the caller, who must not reply about a commit before a WalSync made it
 * durable (the signer's grouped audit writes, see auditLog.ts).
 */
export function openAuditDb(file: string, busyTimeoutMs = DEFAULT_AUDIT_BUSY_TIMEOUT_MS, synchronous: 'FULL' | 'NORMAL' = 'FULL'): Database.Database {
  // 0600 whatever the umask when this process creates it (SQLite would use
  // 0644 minus the umask); an existing file, like the 0660 shared log of the
  // one-user-per-process layout, keeps its mode. -wal/-shm follow the file's.
  // Through a link, the file it points at (which a new volume may not have yet).
  const target = databaseTarget(file)
  assertDatabaseFile(target)
  createPrivateFileIfMissing(target)
  // The timeout is set by the constructor, before the first statement: even
  // switching a new file to WAL waits for the other processes opening it.
  let db: Database.Database
  try {
    db = new Database(file, { timeout: busyTimeoutMs })
    db.pragma('journal_mode = WAL')
  } catch (err) {
    throw databaseOpenError(file, err)
  }
  // FULL: a committed event survives power loss, not just a process crash.
  // NORMAL only with a WalSync that fsyncs before anyone relies on the event.
  db.pragma(`synchronous = ${synchronous}`)
  try {
    assertAuditTable(db, file)
    ensureAuditSchema(db)
  } catch (err) {
    db.close()
    throw err
  }
  return db
}

/**
 * A file whose audit_events is not countersign's table (a view, other
 * columns) is refused in one sentence naming it, before anything is written:
 * otherwise the triggers fail on a view, or the first append says "no such
 * column: seq", with a stack trace. A file without audit_events gets the
 * table (ensureAuditSchema).
 */
function assertAuditTable(db: Database.Database, file: string): void {
  const schema = readSchema(db)
  if (!hasAuditEvents(schema)) return
  const problem = auditTableProblem(schema)
  if (problem === null) return
  throw new OperatorError(
    `${file} is not a countersign audit log as it stands: ${problem}; it was changed outside countersign. Move it aside and restore audit.db from a backup (countersign-audit verify --db names what changed)`,
  )
}

/** An event ready to store: its data already in canonical JSON (JCS). */
export interface PreparedEvent {
  id: string
  timestamp: number
  intentId: string
  event: string
  dataJcs: string
}

/** The chain's newest row, or the genesis hash at seq 0 for an empty log. */
export interface ChainHead {
  seq: number
  hash: string
}

/**
 * Makes the checkpoint event sealing `head`, inside the write transaction
 * (so nothing can come between the row it seals and the checkpoint row), or
 * null when it will not seal this chain (the batch is written without one).
 */
export type Sealer = (head: ChainHead) => PreparedEvent | null

export interface BatchWritten {
  /** The checkpoint row written after the batch, when a sealer was given. */
  checkpoint?: { seq: number; hash: string; sealed: ChainHead }
}

/**
 * Writes a batch of events in one BEGIN IMMEDIATE transaction. The chain's
 * tail is read inside the write lock, so appends from several processes stay
 * one linear chain. With `seal`, a checkpoint row sealing the batch's last
 * row is written in the same transaction: one checkpoint per commit batch.
 * Throws AuditWriteError; nothing of the batch is written then.
 */
export function createBatchWriter(db: Database.Database): (events: PreparedEvent[], seal?: Sealer) => BatchWritten {
  const tail = db.prepare<[], { seq: number; hash: string }>('SELECT seq, hash FROM audit_events ORDER BY seq DESC LIMIT 1')
  const insert = db.prepare(
    'INSERT INTO audit_events (seq, id, timestamp, intent_id, event, data, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  )
  const tableUnchanged = createAuditTableWatch(
    db,
    (problem) =>
      new AuditWriteError(`audit.db was changed while countersign had it open: ${problem}. Nothing more is written to it; restore audit.db from a backup (countersign-audit verify --db names what changed)`, 'AUDIT_TABLE_CHANGED'),
  )
  const write = db.transaction((batch: PreparedEvent[], seal: Sealer | undefined): BatchWritten => {
    tableUnchanged()
    const last = tail.get()
    if (last && (!Number.isSafeInteger(last.seq) || last.seq >= Number.MAX_SAFE_INTEGER - batch.length - 1 || typeof last.hash !== 'string')) {
      // Only a row put in by hand ends the chain where no row can follow it: said in words, not as a UNIQUE failure.
      throw new AuditTailError(
        `audit.db's newest row (seq ${String(last.seq)}) has a seq or hash no append writes, and no event can be chained after it; the log was changed outside countersign (countersign-audit verify names what changed)`,
      )
    }
    let seq = last?.seq ?? 0
    let prevHash = last?.hash ?? GENESIS_HASH
    const put = (e: PreparedEvent) => {
      seq += 1
      const hash = auditRowHashFromJcs({ seq, id: e.id, timestamp: e.timestamp, intentId: e.intentId, event: e.event, dataJcs: e.dataJcs, prevHash })
      // One row, or the batch fails: a trigger planted in audit.db (RAISE(IGNORE)) could
      // otherwise drop chosen events while every writer reports them written.
      if (insert.run(seq, e.id, e.timestamp, e.intentId, e.event, e.dataJcs, prevHash, hash).changes !== 1) {
        throw new AuditWriteError(`audit.db did not store the ${e.event} event (something in the file, such as a trigger added outside countersign, dropped it); countersign-audit verify names what was added`, 'AUDIT_ROW_DROPPED')
      }
      prevHash = hash
    }
    for (const e of batch) put(e)
    if (!seal) return {}
    const sealed = { seq, hash: prevHash }
    const checkpoint = seal(sealed)
    if (!checkpoint) return {}
    put(checkpoint)
    return { checkpoint: { seq, hash: prevHash, sealed } }
  })
  const busyTimeoutMs = (db.pragma('busy_timeout', { simple: true }) as number | undefined) ?? DEFAULT_AUDIT_BUSY_TIMEOUT_MS
  return (events, seal) => {
    try {
      return write.immediate(events, seal)
    } catch (err) {
      throw describeWriteError(err, busyTimeoutMs)
    }
  }
}

/** The chain's tail is a row no append could have written: nothing can follow it. */
export class AuditTailError extends Error {
  override name = 'AuditTailError'
}

export class AuditWriteError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
    /**
     * True when the events were committed and only their fsync failed: they
     * are in the file, and anyone reading the log sees them, though a power
     * cut may still take them. A caller must not act as if they were never
     * written (found by review: an approval whose token id was in the public
     * history went back on the list, and the operator could deny it while
     * the token stayed valid).
     */
    readonly committed = false,
  ) {
    super(message)
    this.name = 'AuditWriteError'
  }
}

/** Says in words what a failed audit transaction means, SQLITE_BUSY above all. */
export function describeWriteError(err: unknown, busyTimeoutMs: number): AuditWriteError {
  const code = (err as { code?: unknown }).code
  const text = err instanceof Error ? err.message : String(err)
  if (code === 'SQLITE_BUSY' || (typeof code === 'string' && code.startsWith('SQLITE_BUSY_'))) {
    return new AuditWriteError(`audit.db stayed locked by another writer for more than ${busyTimeoutMs} ms (${text})`, code)
  }
  return new AuditWriteError(text, typeof code === 'string' ? code : undefined)
}
