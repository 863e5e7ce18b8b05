#!/usr/bin/env node
// countersign-signer audit-reanchor: the way back after audit.db was
// restored from a backup or cut short. The signer seals a new checkpoint only
// over a log that still continues from the one signer.db records (DESIGN §6
// "audit anchoring"); once that row is gone it never seals again, and every
// later signature stays "not sealed" in verify. Only an operator, with the
// signer stopped, can tell a restore from an attack: this command shows what
// verify finds, and with --yes has the signer take the log as it stands.
//
// It is not part of the signer process: it loads verify
// ('@countersign/shared/server'), which main.js and keys.js never do
// (dependencies.test.ts).
import { existsSync } from 'node:fs'
import path from 'node:path'
import Database from 'better-sqlite3'
import {
  AUDIT_PRIVATE_KEY_FILE,
  AUDIT_PUBLIC_KEY_FILE,
  OperatorError,
  createBatchWriter,
  createChainCheck,
  dataDirOption,
  describeFailure,
  holdInstanceLock,
  openAuditDb,
  prepareCheckpointEvent,
  prepareEvent,
  prepareReanchorEvent,
  readDataDir,
  signReanchor,
  GENESIS_HASH,
  type ReanchorFacts,
  signCheckpoint,
  systemClock,
  type ChainHead,
  type Clock,
  type PreparedEvent,
  type WrittenCheckpoint,
} from '@countersign/shared'
import {
  createSignatureCheck,
  loadAuditAnchor,
  type SignerSignatures,
  verifyAuditChain,
  type AuditProblemKind,
  type AuditVerification,
  type SignerSignature,
} from '@countersign/shared/server'
import { loadOrCreateAuditKey } from '../audit/auditKey.js'
import { createAuditCheckpoints } from '../store/auditCheckpoints.js'
import { openSignerDb } from '../store/signerDb.js'
import { createSignatures } from '../store/signatures.js'
import { parseOptions, UsageError } from './args.js'
import { isMainModule } from './isMain.js'

export const REANCHOR_USAGE = `usage: countersign-signer audit-reanchor [--data-dir DIR] [--yes]

After audit.db was restored from a backup, or rows were cut from it, the
signer no longer finds its last checkpoint in the log and seals no new one
(its log says AUDIT LOG TAMPERED). Stop every service, run verify, put
audit.db back from a backup, then run this before anything appends to it
(rows appended where the signer had sealed others are refused). It shows what
verify finds and what it would write; with --yes it writes it: an
audit_reanchored event, the event of each signature signer.db keeps that the
log lost (marked late), and a checkpoint sealing the log as it stands, which
signer.db then records. It refuses a log whose rows are broken, whose schema
was changed, that holds a checkpoint the signer did not sign as it stands or
a signature event that disagrees with signer.db, or whose newest row a
recorded checkpoint sealed is not that row any more.
DIR is the signer's data directory (default: SERVICE_DATA_DIR, else ./data).`

/**
 * What a re-anchor can settle: the log no longer reaches signer.db's
 * checkpoint, and signatures whose events are missing or not sealed. Anything
 * else means rows were changed in place or the file is not countersign's as
 * it stands, and sealing it would vouch for that.
 */
const SETTLED_BY_REANCHOR: ReadonlySet<AuditProblemKind> = new Set(['anchor_mismatch', 'truncated', 'unaudited_signature', 'signature_not_sealed'])

export interface ReanchorIo {
  out: (line: string) => void
  env: Record<string, string | undefined>
}

/** Runs `countersign-signer audit-reanchor`; returns the exit code (0 written or nothing to do, 1 refused or not written, 2 usage). */
export function runAuditReanchor(argv: readonly string[], io: ReanchorIo, clock: Clock = systemClock): number {
  let dataDir: string
  let write: boolean
  try {
    if (argv[0] === '--help' || argv[0] === '-h') {
      io.out(REANCHOR_USAGE)
      return 0
    }
    const opts = parseOptions(argv, ['data-dir', 'yes'], ['yes'])
    dataDir = opts['data-dir'] !== undefined ? dataDirOption(opts['data-dir']) : readDataDir(io.env)
    write = 'yes' in opts
  } catch (err) {
    io.out(`countersign-signer audit-reanchor: ${describeFailure(err)}\n\n${REANCHOR_USAGE}`)
    return 2
  }
  try {
    return reanchor(dataDir, write, io.out, clock)
  } catch (err) {
    io.out(`countersign-signer audit-reanchor: ${describeFailure(err)}`)
    return err instanceof UsageError ? 2 : 1
  }
}

function reanchor(dataDir: string, write: boolean, out: (line: string) => void, clock: Clock): number {
  const files = {
    audit: path.join(dataDir, 'audit.db'),
    signerDb: path.join(dataDir, 'signer.db'),
    key: path.join(dataDir, AUDIT_PRIVATE_KEY_FILE),
    publicKey: path.join(dataDir, AUDIT_PUBLIC_KEY_FILE),
  }
  for (const [what, file] of [
    ['signer.db', files.signerDb],
    ['the audit key', files.key],
    ["the audit key's public half", files.publicKey],
    ['audit.db', files.audit],
  ] as const) {
    if (!existsSync(file)) throw new OperatorError(`${what} is not at ${file}: nothing to re-anchor (is ${dataDir} the signer's data directory? The signer creates them at its first start)`)
  }
  // The signer must not run meanwhile: it seals and records checkpoints itself.
  const lock = holdInstanceLock(dataDir, 'signer')
  try {
    // The head first: the walk below reaches at least this far, and the write checks that the log still continues from it.
    const verifiedHead = readHead(files.audit)
    const anchor = loadAuditAnchor(files.publicKey, files.signerDb)
    const verdict = verifyAuditChain(files.audit, anchor)
    if (verdict.ok) {
      out(`audit chain OK: ${verdict.rows} events, ${verdict.checkpoints} signed checkpoints; the log reaches signer.db's checkpoint: nothing to re-anchor`)
      return 0
    }
    listProblems(verdict, out)
    const kinds = Object.entries(verdict.kinds) as [AuditProblemKind, number][]
    const unsettled = kinds.filter(([kind]) => !SETTLED_BY_REANCHOR.has(kind))
    if (unsettled.length > 0) {
      out(
        `refused: ${unsettled.map(([kind, n]) => `${n} ${kind}`).join(', ')}. A re-anchor would seal rows that were changed in place, or a file that is not ` +
          `countersign's as it stands. ${RESTORE_FIRST}`,
      )
      return 1
    }
    if (!verdict.kinds.truncated && !verdict.kinds.anchor_mismatch && !verdict.kinds.unaudited_signature) {
      // The log still reaches signer.db's checkpoint and holds every signature's event: the signer's own next checkpoint seals them.
      out('not re-anchored: the log still reaches the checkpoint signer.db records; start the signer, and its next checkpoint (within 10 s) seals these events. Nothing was written.')
      return 1
    }
    const { lost, rewritten } = signatureEvents(files.audit, anchor.signatures ?? null)
    if (rewritten.length > 0) {
      out(
        `refused: ${rewritten.length} signature event(s) in the log disagree with signer.db (the first: signature ${rewritten[0]!.txHash} of intent ${rewritten[0]!.intentId}): ` +
          `the log was rewritten, and a re-anchor would seal the rewrite. ${RESTORE_FIRST}`,
      )
      return 1
    }
    const { db: signerDb, wal } = openSignerDb(files.signerDb)
    try {
      // The newest row any checkpoint the signer recorded sealed, if the log still reaches it: it must be that row still. A
      // rewrite whose later checkpoints were cut or stripped passes every other check here (found by review); a restored
      // backup holds each row the signer sealed before the backup was made, unchanged. Rows appended after a restore, where
      // the signer had sealed others, fail this too: restore again and re-anchor before anything else writes to the log.
      const vouched = createAuditCheckpoints(signerDb).newestVouchedAtOrBelow(verifiedHead.seq)
      const vouchedNow = vouched && rowHash(files.audit, vouched.seq)
      if (vouched && vouchedNow !== vouched.hash) {
        out(
          `refused: row ${vouched.seq} is not the row the signer sealed at that seq (${new Date(vouched.writtenAt).toISOString()}: hash ${vouched.hash}, now ` +
            `${vouchedNow ?? 'missing'}). Either rows the signer had sealed were rewritten and the checkpoints after them removed, or events were appended ` +
            `after an older backup was restored. ${RESTORE_FIRST} Run it before any service starts: nothing may append to the restored log first.`,
        )
        return 1
      }
      const previous = anchor.latest
      // Every checkpoint in the log is valid here (anything else was refused above). The rows after the last one, and after
      // the newest row a recorded checkpoint vouches for, were never sealed as they stand.
      const sealedThrough = Math.max(verdict.lastCheckpointSeq, vouched?.seq ?? 0)
      const unsealedRows = verifiedHead.seq > sealedThrough ? { from: sealedThrough + 1, to: verifiedHead.seq } : null
      out(
        `plan: take the log as it stands (${verdict.rows} events, head at seq ${verifiedHead.seq}) in place of signer.db's checkpoint` +
          `${previous ? ` at seq ${previous.seq}` : ' (none recorded)'}: write audit_reanchored, ${lost.length} signature event(s) the log lost (marked late), ` +
          `and a checkpoint sealing them, then record that checkpoint in signer.db`,
      )
      if (unsealedRows) {
        out(
          `  rows ${unsealedRows.from} to ${unsealedRows.to} come after every row a checkpoint of the signer's vouches for, and the re-anchor seals them as they ` +
            `stand: compare them with your backup (countersign-audit tail) before --yes. Signature events among them are checked against signer.db above.`,
        )
      }
      if (!write) {
        out('nothing written: run again with --yes to write it')
        return 1
      }
      const facts = { previousCheckpoint: previous, logHead: verifiedHead, problems: Object.fromEntries(kinds), lateSignatures: lost.length, unsealedRows }
      const written = writeReanchor(files.audit, dataDir, signerDb, facts, lost, clock)
      out(`written: audit_reanchored at seq ${written.reanchorSeq}, ${lost.length} late signature event(s), checkpoint at seq ${written.checkpoint.seq}, recorded in signer.db`)
    } finally {
      signerDb.close()
      void wal.close()
    }
    const after = verifyAuditChain(files.audit, loadAuditAnchor(files.publicKey, files.signerDb))
    if (after.ok) {
      out(`audit chain OK: ${after.rows} events, ${after.checkpoints} signed checkpoints`)
      return 0
    }
    out('verify still finds problems after the re-anchor:')
    listProblems(after, out)
    return 1
  } finally {
    lock.release()
  }
}

const RESTORE_FIRST = 'Restore audit.db from a backup (countersign-audit verify --db on the copy first), then run this again. Nothing was written.'

function listProblems(verdict: Extract<AuditVerification, { ok: false }>, out: (line: string) => void): void {
  for (const p of verdict.problems) out(`  ${p.seq === null ? '' : `seq ${p.seq} `}(${p.kind}): ${p.problem}`)
  if (verdict.problemCount > verdict.problems.length) out(`  … and ${verdict.problemCount - verdict.problems.length} more`)
  out(`verify: ${verdict.problemCount} problem(s) in ${verdict.rows} events`)
}

/** Opens audit.db read-only for one read; a file SQLite cannot read as an audit log is said in a sentence. */
function readAudit<T>(auditFile: string, read: (db: Database.Database) => T): T {
  let db: Database.Database | undefined
  try {
    db = new Database(auditFile, { readonly: true, fileMustExist: true })
    return read(db)
  } catch (err) {
    if (err instanceof Database.SqliteError) {
      throw new OperatorError(`${auditFile} cannot be read as countersign's audit log (${err.message}); restore it from a backup (countersign-audit verify --db names what is wrong)`)
    }
    throw err
  } finally {
    db?.close()
  }
}

function readHead(auditFile: string): ChainHead {
  return readAudit(auditFile, (db) => db.prepare<[], ChainHead>('SELECT seq, hash FROM audit_events ORDER BY seq DESC LIMIT 1').get() ?? { seq: 0, hash: GENESIS_HASH })
}

function rowHash(auditFile: string, seq: number): string | null {
  return readAudit(auditFile, (db) => db.prepare<[number], string>('SELECT hash FROM audit_events WHERE seq = ?').pluck().get(seq) ?? null)
}

/**
 * The signatures signer.db keeps that have no matching event in the log
 * (lost), and those with an event that disagrees with it (rewritten), by
 * signatureCheck.ts's rules.
 */
function signatureEvents(auditFile: string, signatures: SignerSignatures | null): { lost: SignerSignature[]; rewritten: SignerSignature[] } {
  if (!signatures) return { lost: [], rewritten: [] }
  const check = createSignatureCheck(signatures)
  readAudit(auditFile, (db) => {
    const rows = db.prepare<[], { seq: number; event: string; intent_id: string; data: string }>(
      "SELECT seq, event, intent_id, data FROM audit_events WHERE event IN ('signature_created', 'signature_replaced') ORDER BY seq",
    )
    for (const r of rows.iterate()) check.event(r)
  })
  return { lost: [...check.unmatched()], rewritten: [...check.rewritten()] }
}

/**
 * One audit.db commit (synchronous=FULL: durable when it returns): the
 * audit_reanchored event (signed with the audit key), the late signature
 * events, and a checkpoint sealing them, signed only if the log still
 * continues from the head that was verified. Then signer.db records the
 * checkpoint and marks the current signatures audited, in one transaction
 * on disk before return.
 */
function writeReanchor(
  auditFile: string,
  dataDir: string,
  signerDb: Database.Database,
  facts: ReanchorFacts,
  lost: SignerSignature[],
  clock: Clock,
): { reanchorSeq: number; checkpoint: WrittenCheckpoint } {
  const key = loadOrCreateAuditKey(dataDir)
  // No group commit here: each commit is on disk before the next step.
  signerDb.pragma('synchronous = FULL')
  const signatures = createSignatures(signerDb)
  const events: PreparedEvent[] = [
    prepareReanchorEvent(signReanchor(key.privateKey, key.fingerprint, facts), clock).prepared,
    ...lost.map((s) => prepareEvent(lateSignatureEvent(s, signatures.replaced.bind(signatures)), clock).prepared),
  ]
  const auditDb = openAuditDb(auditFile)
  let written
  try {
    const continuesFrom = createChainCheck(auditDb)
    const verifiedHead = facts.logHead
    written = createBatchWriter(auditDb)(events, (head) => {
      // From the verified head; an empty log must still be empty but for these events (found by review).
      // Nothing may have been appended since the verify either: such rows would be sealed unseen, and unnamed in unsealedRows
      // (found by review: this command holds the signer's lock only, and a gateway left running goes on appending).
      const appended = head.seq - events.length - verifiedHead.seq
      const problem =
        appended !== 0
          ? `${appended} row(s) were appended since it was verified: stop every service first`
          : verifiedHead.seq > 0
            ? continuesFrom(verifiedHead)
            : null
      // Thrown inside the write transaction: nothing of the batch is written.
      if (problem) throw new OperatorError(`audit.db changed while it was being re-anchored (${problem}); nothing was written, run this again`)
      return prepareCheckpointEvent({ seq: head.seq, headHash: head.hash, key: key.fingerprint, signature: signCheckpoint(key.privateKey, head.seq, head.hash) }, clock).prepared
    })
  } finally {
    auditDb.close()
  }
  const checkpoint = written.checkpoint!
  const checkpoints = createAuditCheckpoints(signerDb)
  signerDb.transaction(() => {
    checkpoints.reanchor(checkpoint, clock())
    for (const s of lost) if (s.replacedBy === null) signatures.markAudited(s.intentId, s.txHash)
  })()
  return { reanchorSeq: checkpoint.sealed.seq - lost.length, checkpoint }
}

/** A lost signature's event as the signer writes it (signerCore's appendSignatureEvent), marked late. */
function lateSignatureEvent(s: SignerSignature, replaced: (txHash: string) => { nonce: number } | undefined) {
  const data = { txRequestHash: s.txRequestHash, signerAddress: s.signerAddress, txHash: s.txHash, nonce: s.nonce, tokenId: s.tokenId, late: true }
  if (typeof s.replacesTxHash === 'string') {
    return { intentId: s.intentId, event: 'signature_replaced', data: { ...data, replacedTxHash: s.replacesTxHash, replacedNonce: replaced(s.replacesTxHash)?.nonce ?? null } }
  }
  return { intentId: s.intentId, event: 'signature_created', data }
}

if (isMainModule(import.meta.url)) {
  process.exitCode = runAuditReanchor(process.argv.slice(2), { out: (line) => process.stdout.write(`${line}\n`), env: process.env })
}
