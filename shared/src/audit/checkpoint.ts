// Signed checkpoints (DESIGN §6 "audit anchoring"). The hash chain alone
// proves nothing to someone who can write audit.db: they can edit a row and
// recompute every later hash with auditRowHash. A checkpoint is a row the
// signer appends, signed with its audit key (Ed25519, node:crypto; no
// dependency), that names the row before it: {seq, headHash}. Without the
// private key nobody can make a checkpoint for a rewritten chain, and the
// signer keeps its latest checkpoint in signer.db, so a log cut short of it
// is caught too. Ed25519 because node:crypto signs and verifies it
// synchronously, inside the audit write transaction, with nothing added to
// the signer's dependencies (services/signer/src/dependencies.test.ts).
import { createHash, createPublicKey, sign, verify, type KeyObject } from 'node:crypto'
import { canonicalize } from '../canonical/jcs.js'
import { OperatorError } from '../operatorError.js'

/** The event name of a checkpoint row; its intentId is `system`. */
export const CHECKPOINT_EVENT = 'checkpoint'
export const CHECKPOINT_INTENT_ID = 'system'

/** What a checkpoint row's data holds (besides the intentId every row carries). */
export interface CheckpointData {
  /** The row it seals: the one just before the checkpoint row. */
  seq: number
  /** That row's hash: it commits to every row up to it. */
  headHash: string
  /** Fingerprint of the public key that signed (auditKeyFingerprint). */
  key: string
  /** Ed25519 signature of checkpointMessage(seq, headHash), base64url. */
  signature: string
}

/**
 * The event the signer writes when an operator re-anchors the log
 * (countersign-signer audit-reanchor): the log no longer reached the signer's
 * recorded checkpoint (restored from a backup, or cut by someone who could
 * write it), and the operator had the signer take the log as it stands. A
 * checkpoint follows it in the same commit. Its intentId is `system`.
 */
export const REANCHOR_EVENT = 'audit_reanchored'

/** What an audit_reanchored row says (its data, less the signature over it: ReanchorData). */
export interface ReanchorFacts {
  /** signer.db's checkpoint before the re-anchor (seq and hash of the checkpoint row), null when it had none. */
  previousCheckpoint: LatestCheckpoint | null
  /** The log's newest row when it was verified for the re-anchor. */
  logHead: { seq: number; hash: string }
  /** What verify found then, by kind (AuditProblemKind), every one counted. */
  problems: Record<string, number>
  /** Signatures signer.db keeps whose events the log had lost, written again after this row, each marked late. */
  lateSignatures: number
  /**
   * The rows no checkpoint had sealed when the log was re-anchored (after the
   * last checkpoint in it, up to logHead), null for none. The re-anchor's
   * checkpoint seals them as found: nothing vouched for them before, so
   * whoever could write audit.db may have written or rewritten them (a
   * restore and a rewrite with the later checkpoints removed look the same).
   */
  unsealedRows: { from: number; to: number } | null
}

/**
 * An audit_reanchored row's data: the facts, signed with the audit key like a
 * checkpoint (another message prefix), so that a row of that name put in the
 * log by anyone else is reported, not counted as an operator's re-anchor.
 */
export interface ReanchorData extends ReanchorFacts {
  /** Fingerprint of the audit key (auditKeyFingerprint). */
  key: string
  /** Ed25519 signature of reanchorMessage(facts), base64url. */
  signature: string
}

/** The bytes a re-anchor signs: its own prefix, then the facts as canonical JSON. */
export function reanchorMessage(facts: ReanchorFacts): Buffer {
  const { previousCheckpoint, logHead, problems, lateSignatures, unsealedRows } = facts
  return Buffer.from(`countersign audit reanchor v1\n${canonicalize({ previousCheckpoint, logHead, problems, lateSignatures, unsealedRows })}`, 'utf8')
}

export function signReanchor(privateKey: KeyObject, fingerprint: string, facts: ReanchorFacts): ReanchorData {
  return { ...facts, key: fingerprint, signature: sign(null, reanchorMessage(facts), privateKey).toString('base64url') }
}

/** Whether an audit_reanchored row's data (parsed) is one the holder of `publicKey` signed. */
export function reanchorSignatureValid(publicKey: KeyObject, fingerprint: string, data: unknown): boolean {
  if (typeof data !== 'object' || data === null) return false
  const d = data as Partial<ReanchorData>
  if (d.key !== fingerprint || typeof d.signature !== 'string') return false
  try {
    return verify(null, reanchorMessage(d as ReanchorFacts), publicKey, Buffer.from(d.signature, 'base64url'))
  } catch {
    return false
  }
}

/** The signer's latest checkpoint as it keeps it in signer.db. */
export interface LatestCheckpoint {
  /** seq of the checkpoint row itself. */
  seq: number
  /** Hash of the checkpoint row itself. */
  hash: string
}

/** The bytes signed: a fixed prefix keeps the key from signing anything else's format. */
export function checkpointMessage(seq: number, headHash: string): Buffer {
  return Buffer.from(`countersign audit checkpoint v1\n${seq}\n${headHash}`, 'utf8')
}

export function signCheckpoint(privateKey: KeyObject, seq: number, headHash: string): string {
  return sign(null, checkpointMessage(seq, headHash), privateKey).toString('base64url')
}

export function checkpointSignatureValid(publicKey: KeyObject, seq: number, headHash: string, signature: string): boolean {
  try {
    return verify(null, checkpointMessage(seq, headHash), publicKey, Buffer.from(signature, 'base64url'))
  } catch {
    return false
  }
}

/** sha256 of the DER public key, first 16 bytes, hex: names the key in each checkpoint. */
export function auditKeyFingerprint(publicKey: KeyObject): string {
  return createHash('sha256').update(publicKey.export({ type: 'spki', format: 'der' })).digest('hex').slice(0, 32)
}

export class AuditKeyError extends OperatorError {
  override name = 'AuditKeyError'
}

/** Parses audit-key.pub (a PEM "PUBLIC KEY", Ed25519). */
export function parseAuditPublicKey(pem: string): KeyObject {
  let key: KeyObject
  try {
    key = createPublicKey(pem)
  } catch (err) {
    throw new AuditKeyError(`not a PEM public key (${(err as Error).message})`)
  }
  if (key.asymmetricKeyType !== 'ed25519') throw new AuditKeyError(`an Ed25519 key is expected, this one is ${key.asymmetricKeyType}`)
  return key
}

/** Reads a checkpoint row's data; null when its shape is not a checkpoint's. */
export function readCheckpointData(data: unknown): CheckpointData | null {
  if (typeof data !== 'object' || data === null) return null
  const d = data as Record<string, unknown>
  if (!Number.isSafeInteger(d.seq) || typeof d.headHash !== 'string' || typeof d.key !== 'string' || typeof d.signature !== 'string') return null
  return { seq: d.seq as number, headHash: d.headHash, key: d.key, signature: d.signature }
}

/** The one-row table of signer.db that holds the signer's latest checkpoint. */
export const SIGNER_CHECKPOINT_TABLE = 'audit_checkpoint'
/** File names in the signer's data directory: the private key (0600) and its public half. */
export const AUDIT_PRIVATE_KEY_FILE = 'audit-key'
export const AUDIT_PUBLIC_KEY_FILE = 'audit-key.pub'
