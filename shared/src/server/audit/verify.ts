import type { KeyObject } from 'node:crypto'
import Database from 'better-sqlite3'
import { auditKeyFingerprint, CHECKPOINT_EVENT, checkpointSignatureValid, readCheckpointData, REANCHOR_EVENT, reanchorSignatureValid, type LatestCheckpoint } from '../../audit/checkpoint.js'
import { GENESIS_HASH, type AuditRow } from '../../audit/schema.js'
import { assertDatabaseFile } from '../../files/privateFiles.js'
import { escapeForDisplay } from '../display/escape.js'
import { databaseDamageProblem, databaseFileProblem } from './fileCheck.js'
import { ROWS_WITH_TEXT_BYTES, rowContentProblem, textBytesProblem } from './rowChecks.js'
import { auditTableProblem, currentAuditSchema, readSchema, schemaProblems } from './schemaCheck.js'
import { createSignatureCheck, isSignatureEvent, type SignerSignatures } from './signatureCheck.js'

/**
 * What kind of problem verify found. `bad_checkpoint`: a checkpoint row the
 * signer did not write as it stands (no checkpoint fields, another key, a
 * signature that does not verify), or an audit_reanchored row it did not sign. `sealed_rows_changed`: a checkpoint the
 * signer did sign, for rows that are no longer what it sealed.
 * `anchor_mismatch`: the log does not hold signer.db's latest checkpoint as
 * recorded. `truncated`: the log ends before it. `schema`: a trigger, view,
 * index or table that is not the audit log's, or an append-only trigger
 * missing (schemaCheck.ts). `damaged_file`: SQLite finds the file's pages
 * damaged, or cannot read it (fileCheck.ts). `unaudited_signature`: a
 * signature signer.db keeps has no event in the log, or one whose data
 * disagrees with it. `signature_not_sealed`: its event is there, but no valid
 * checkpoint follows it (signatureCheck.ts).
 */
export type AuditProblemKind =
  | 'damaged_file'
  | 'schema'
  | 'broken_row'
  | 'bad_checkpoint'
  | 'sealed_rows_changed'
  | 'anchor_mismatch'
  | 'truncated'
  | 'unaudited_signature'
  | 'signature_not_sealed'
  | 'unknown_signature'

export interface AuditProblem {
  /**
   * The row it is about (for `truncated`, the first row missing from the end;
   * for the signature kinds, the signature's event); null for the database's
   * objects, and for a signature with no event in the log.
   */
  seq: number | null
  kind: AuditProblemKind
  /** In words, for the operator. */
  problem: string
}

/** How many problems a verification lists; it counts them all. */
export const MAX_LISTED_PROBLEMS = 20

interface Walked {
  /** Rows read. */
  rows: number
  /** Checkpoint rows seen (their signatures checked when a key was given). */
  checkpoints: number
  /** seq of the newest checkpoint row, 0 when there is none. */
  lastCheckpointSeq: number
  /**
   * seq of each audit_reanchored row (countersign-signer audit-reanchor): the
   * log once lost the signer's checkpoint and an operator had the signer take
   * it as it stood. Reported even when verify passes, so that nobody reads an
   * OK as "never cut".
   */
  reanchors: number[]
}

export type AuditVerification =
  | ({ ok: true } & Walked)
  | ({
      ok: false
      /**
       * The first MAX_LISTED_PROBLEMS problems, in the order found: the file,
       * the database's objects, rows in seq order, the log's end, then
       * signer.db's signatures in its table order.
       */
      problems: AuditProblem[]
      /** Every problem found, listed or not. */
      problemCount: number
      /** How many of each kind were found, listed or not. */
      kinds: Partial<Record<AuditProblemKind, number>>
    } & Walked)

export interface AuditAnchor {
  /** The signer's public audit key (audit-key.pub): every checkpoint must carry its valid signature. */
  publicKey: KeyObject
  /** The signer's latest checkpoint (signer.db); null when it has recorded none. */
  latest: LatestCheckpoint | null
  /**
   * The signatures signer.db keeps: each must have its event in the log,
   * sealed by a valid checkpoint. null when signer.db has no signatures
   * table; absent, not checked.
   */
  signatures?: SignerSignatures | null
  /**
   * The log's newest seq, read before signer.db's signatures were: a signature
   * event after it may be of a signature stored after that read (the signer
   * stores a signature, then writes its event), so only events up to it are
   * held against them as unknown. Absent: every event is (a log no signer
   * writes meanwhile). Found by review: verify of a busy signer's log named
   * the signatures made during the run as unknown.
   */
  logSeqBeforeSignatures?: number
}

/** The log's newest seq (0 for none); null when the file cannot be read as an audit log (the walk says why). */
export function readNewestSeq(file: string): number | null {
  try {
    // A FIFO is refused before SQLite's open waits on it.
    assertDatabaseFile(file)
    const db = new Database(file, { readonly: true, fileMustExist: true })
    try {
      return db.prepare<[], number | null>('SELECT max(seq) FROM audit_events').pluck().get() ?? 0
    } finally {
      db.close()
    }
  } catch {
    return null
  }
}

/**
 * Walks the chain in seq order: sequence numbers must be 1, 2, 3…, each row
 * must link to the previous row's hash, each row's data must be stored as
 * canonical JSON, and each stored hash must match the row as stored (see
 * rowChecks.ts). With an anchor, every checkpoint row must seal the row
 * before it with a valid signature of the signer's audit key, and the log
 * must reach the signer's latest checkpoint, unchanged; with signer.db's
 * signatures, each must have its event, as signer.db records it, before a
 * valid checkpoint (signatureCheck.ts). Before the walk,
 * SQLite must find the file's pages sound (fileCheck.ts), and the database
 * must hold only the audit log's own objects (schemaCheck.ts). A damaged file
 * is not walked: its rows are not what was written, and blaming them on an
 * edit would send the operator looking for an intruder instead of a backup.
 *
 * It walks on past a problem and reports all it finds: a first problem that
 * anyone who can write the file can cause (a bogus checkpoint row) must not
 * hide a rewrite further on. Each row is compared with its stored neighbour,
 * not with what the row before should have been, so one bad row is one
 * problem, not a cascade.
 */
export function verifyAuditChain(file: string, anchor?: AuditAnchor): AuditVerification {
  assertDatabaseFile(file)
  const db = new Database(file, { readonly: true, fileMustExist: true })
  const fingerprint = anchor ? auditKeyFingerprint(anchor.publicKey) : null
  const found = problemList()
  const walked: Walked = { rows: 0, checkpoints: 0, lastCheckpointSeq: 0, reanchors: [] }
  const signatures = anchor?.signatures ? createSignatureCheck(anchor.signatures) : null
  // seq of the newest checkpoint row found valid (it seals every row before it), 0 for none.
  let lastValidCheckpointSeq = 0
  try {
    const damage = databaseFileProblem(db, file)
    if (damage !== null) {
      found.add({ seq: null, kind: 'damaged_file', problem: `${damage} (its rows were not read)` })
      return { ok: false, problems: found.listed, problemCount: found.count, kinds: found.kinds, ...walked }
    }
    const schema = readSchema(db)
    const current = currentAuditSchema()
    for (const problem of schemaProblems(schema, current)) found.add({ seq: null, kind: 'schema', problem })
    // Only countersign's own table is read: a view of that name may never end (see auditTableProblem).
    const tableProblem = auditTableProblem(schema, current)
    if (tableProblem !== null) {
      found.add({ seq: null, kind: 'schema', problem: `${tableProblem} (its rows were not read)` })
      return { ok: false, problems: found.listed, problemCount: found.count, kinds: found.kinds, ...walked }
    }
    const rows = db.prepare<[], AuditRow & Record<string, unknown>>(ROWS_WITH_TEXT_BYTES).iterate()
    let expectedSeq = 1
    let prevHash: unknown = GENESIS_HASH
    let latestSeen = false
    for (const r of rows) {
      const at = (kind: AuditProblemKind, problem: string) => found.add({ seq: r.seq, kind, problem })
      const link = linkProblem(r, expectedSeq, prevHash)
      if (link !== null) at('broken_row', link)
      const content = rowContentProblem(r) ?? textBytesProblem(r)
      if (content !== null) at('broken_row', content)
      if (r.event === CHECKPOINT_EVENT) {
        walked.checkpoints += 1
        walked.lastCheckpointSeq = r.seq
        // A row whose own content is broken is reported as such; its checkpoint fields mean nothing then.
        const checkpoint = anchor && content === null ? checkpointProblem(r, anchor.publicKey, fingerprint!) : null
        if (checkpoint !== null) at(checkpoint.kind, checkpoint.problem)
        else if (anchor && content === null && link === null) lastValidCheckpointSeq = r.seq
      }
      if (r.event === REANCHOR_EVENT && content === null) {
        // Counted only when the signer signed it: anyone who can write the file can put a row of that name in it (found by review).
        if (!anchor || reanchorSignatureValid(anchor.publicKey, fingerprint!, JSON.parse(r.data))) walked.reanchors.push(r.seq)
        else at('bad_checkpoint', 'this audit_reanchored row is not one the signer wrote (its signature does not verify with the audit key): it was put into the file directly, or its fields edited')
      }
      if (signatures && isSignatureEvent(r.event)) {
        const unknown = signatures.event(r)
        if (unknown !== null && (anchor?.logSeqBeforeSignatures === undefined || r.seq <= anchor.logSeqBeforeSignatures)) found.add(unknown)
      }
      if (anchor?.latest && r.seq === anchor.latest.seq) {
        latestSeen = true
        if (r.hash !== anchor.latest.hash) {
          at('anchor_mismatch', `this row is not the signer's latest checkpoint (signer.db has hash ${shown(anchor.latest.hash)} for seq ${shown(r.seq)}): the log was rewritten`)
        }
      }
      expectedSeq = r.seq + 1
      prevHash = r.hash
      walked.rows += 1
    }
    const lastSeq = expectedSeq - 1
    for (const p of anchorEndProblems(anchor, { lastSeq, latestSeen, ...walked })) found.add(p)
    if (signatures) for (const p of signatures.problems(lastValidCheckpointSeq)) found.add(p)
    if (found.count === 0) return { ok: true, ...walked }
    return { ok: false, problems: found.listed, problemCount: found.count, kinds: found.kinds, ...walked }
  } catch (err) {
    // The check above reads every page, so this is a file damaged since, or
    // damage integrity_check does not see: a verdict all the same, not a stack trace.
    const damage = databaseDamageProblem(err, file)
    if (damage === null) throw err
    const where = walked.rows > 0 ? `after ${walked.rows} rows were read and checked` : 'before any row was read'
    found.add({ seq: null, kind: 'damaged_file', problem: `${damage} (reading failed ${where})` })
    return { ok: false, problems: found.listed, problemCount: found.count, kinds: found.kinds, ...walked }
  } finally {
    db.close()
  }
}

/**
 * A value read from audit.db or signer.db, as problem texts show it: whoever
 * can write those files chose it, so its control and bidi characters are
 * escaped (a hash carrying terminal escapes must not redraw the screen).
 */
function shown(value: unknown): string {
  return escapeForDisplay(String(value))
}

/** Why the row does not follow the row before it, or null. */
function linkProblem(r: AuditRow, expectedSeq: number, prevHash: unknown): string | null {
  // A gap explains the broken link that comes with it: one problem, not two.
  if (r.seq !== expectedSeq) return `expected row ${expectedSeq} next, found ${shown(r.seq)} (rows deleted or inserted)`
  if (r.prev_hash !== prevHash) return 'its link does not match the previous row (a row before it was changed, removed or reordered)'
  return null
}

/**
 * Why a checkpoint row (whose own content is intact) does not vouch for the
 * rows before it, or null. Its signature is checked before what it seals, so
 * a row that is no checkpoint of the signer's is named as such and never
 * blames the rows before it; only a checkpoint the signer did sign, for rows
 * that are no longer what it sealed, does.
 */
function checkpointProblem(r: AuditRow, publicKey: KeyObject, fingerprint: string): { kind: AuditProblemKind; problem: string } | null {
  const notSigners = (why: string) => ({ kind: 'bad_checkpoint' as const, problem: `${why}: this checkpoint row is not one the signer wrote (forged, or its fields edited)` })
  const cp = readCheckpointData(JSON.parse(r.data))
  if (!cp) return notSigners('it has no {seq, headHash, key, signature}')
  if (cp.key !== fingerprint) return notSigners(`it names key ${shown(cp.key)}, not the audit key ${fingerprint}`)
  if (!checkpointSignatureValid(publicKey, cp.seq, cp.headHash, cp.signature)) return notSigners('its signature does not verify with the audit key')
  if (cp.seq !== r.seq - 1) {
    return { kind: 'sealed_rows_changed', problem: `the signer sealed row ${shown(cp.seq)} with it, but it now follows row ${shown(r.seq - 1)}: rows were inserted or removed before it, or it was moved` }
  }
  if (cp.headHash !== r.prev_hash) {
    return { kind: 'sealed_rows_changed', problem: `the signer sealed row ${shown(cp.seq)} when its hash was ${shown(cp.headHash)}, and it is now ${shown(r.prev_hash)}: rows up to ${shown(cp.seq)} were changed after they were sealed` }
  }
  return null
}

/** What the end of the walk says against signer.db's latest checkpoint. */
function anchorEndProblems(anchor: AuditAnchor | undefined, end: Walked & { lastSeq: number; latestSeen: boolean }): AuditProblem[] {
  if (!anchor) return []
  const { latest } = anchor
  if (latest && end.lastSeq < latest.seq) {
    return [{ seq: end.lastSeq + 1, kind: 'truncated', problem: `the log ends at seq ${end.lastSeq}, before the signer's latest checkpoint at seq ${latest.seq} (rows were deleted from its end)` }]
  }
  if (latest && !end.latestSeen) {
    return [{ seq: latest.seq, kind: 'anchor_mismatch', problem: `the signer's latest checkpoint, row ${latest.seq}, is missing from the log (rows were deleted)` }]
  }
  if (!latest && end.checkpoints > 0) {
    return [
      { seq: end.lastCheckpointSeq, kind: 'anchor_mismatch', problem: `the log holds ${end.checkpoints} checkpoints but signer.db records none (not this signer's log, or its signer.db was replaced)` },
    ]
  }
  return []
}

/** Keeps the first MAX_LISTED_PROBLEMS problems and counts them all: a log rewritten throughout has one a row. */
function problemList(): { add(p: AuditProblem): void; readonly listed: AuditProblem[]; readonly count: number; readonly kinds: Partial<Record<AuditProblemKind, number>> } {
  const listed: AuditProblem[] = []
  const kinds: Partial<Record<AuditProblemKind, number>> = {}
  let count = 0
  return {
    add(p) {
      count += 1
      kinds[p.kind] = (kinds[p.kind] ?? 0) + 1
      if (listed.length < MAX_LISTED_PROBLEMS) listed.push(p)
    },
    listed,
    kinds,
    get count() {
      return count
    },
  }
}
