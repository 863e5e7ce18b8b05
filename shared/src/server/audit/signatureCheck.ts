// Does the log hold the event of every signature the signer keeps? The
// checkpoints prove that sealed rows were not changed afterwards; they say
// nothing about a row deleted or rewritten before the signer sealed it (found
// by review: a writer of audit.db that removed a signature_created row in that
// window left a log that verified). signer.db, which only the signer writes,
// keeps every signature it returned (`signatures`, and the ones an intent no
// longer uses in `replaced_signatures`), so verify cross-checks the two: each
// kept signature needs its event (signature_created, or signature_replaced for
// a replacement) with the same intent id, txHash and data, and a valid
// checkpoint after it.
//
// signer.db is read here with plain SQL (the signer's store lives in
// services/signer, which shared cannot import; its schema is in
// services/signer/src/store/signerDb.ts, the event's data in
// appendSignatureEvent, services/signer/src/signing/signerCore.ts). Never the
// signed transactions (signed_tx): they are not needed, and are not printed.
import type Database from 'better-sqlite3'
import { escapeForDisplay } from '../display/escape.js'
import type { AuditProblem } from './verify.js'

export const SIGNATURE_CREATED = 'signature_created'
export const SIGNATURE_REPLACED = 'signature_replaced'

/** Whether a row's event is one of the signer's signature events. */
export function isSignatureEvent(event: unknown): boolean {
  return event === SIGNATURE_CREATED || event === SIGNATURE_REPLACED
}

/** A signature as signer.db keeps it: what its audit event must say. */
export interface SignerSignature {
  intentId: string
  txHash: string
  /** null when signer.db does not say (a replaced signature whose intent has no row in `signatures`). */
  txRequestHash: string | null
  signerAddress: string
  nonce: number
  tokenId: string | null
  /**
   * The txHash of the signature it replaced (its event is then
   * signature_replaced, naming it as replacedTxHash), null for a first
   * signature (signature_created), undefined when signer.db does not say (a
   * replaced signature: replaced_signatures links each to its successor, and
   * the first one of an intent has no predecessor to find): either event.
   */
  replacesTxHash: string | null | undefined
  /** For a replaced signature (replaced_signatures), the txHash that replaced it; null for the intent's current one. */
  replacedBy: string | null
  /**
   * signer.db's audited flag (current signatures only): set once the signer
   * saw the event committed. null when signer.db keeps none for it.
   */
  audited: boolean | null
}

/** signer.db's signatures, by intent id and txHash (signatureKey), in table order: `signatures`, then `replaced_signatures`. */
export interface SignerSignatures {
  byKey: Map<string, SignerSignature>
}

/** A signature's key: its intent id and txHash (hex, any case). Length-prefixed, so no intent id can run into the hash. */
function signatureKey(intentId: string, txHash: string): string {
  return `${intentId.length}:${intentId}:${txHash.toLowerCase()}`
}

const text = (v: unknown): string | null => (v === null || v === undefined ? null : String(v))

/**
 * The signatures signer.db keeps, read in one pass over each table (the
 * current ones, then the replaced ones, each with its intent's
 * txRequestHash: a replacement is refused unless it is for the same
 * transaction request). null when signer.db has no `signatures` table (a
 * signer.db from before signatures were kept, or a fresh one). Tolerates the
 * columns older versions lack (audited, replaces_tx_hash) and a missing
 * `replaced_signatures`.
 */
export function readSignerSignatures(db: Database.Database): SignerSignatures | null {
  const tables = new Set(
    db.prepare<[], string>("SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('signatures', 'replaced_signatures')").pluck().all(),
  )
  if (!tables.has('signatures')) return null
  const columns = new Set(db.prepare<[], string>("SELECT name FROM pragma_table_info('signatures')").pluck().all())
  const audited = columns.has('audited') ? 'audited' : 'NULL'
  const replaces = columns.has('replaces_tx_hash') ? 'replaces_tx_hash' : 'NULL'
  const byKey = new Map<string, SignerSignature>()
  // One event covers every row of the same intent and txHash (the same transaction): the first row stands for them.
  const keep = (s: SignerSignature) => {
    const key = signatureKey(s.intentId, s.txHash)
    if (!byKey.has(key)) byKey.set(key, s)
  }
  type Current = { intent_id: unknown; tx_hash: unknown; tx_request_hash: unknown; signer_address: unknown; nonce: unknown; token_id: unknown; replaces_tx_hash: unknown; audited: unknown }
  const current = db.prepare<[], Current>(
    `SELECT intent_id, tx_hash, tx_request_hash, signer_address, nonce, token_id, ${replaces} AS replaces_tx_hash, ${audited} AS audited FROM signatures`,
  )
  for (const r of current.iterate()) {
    keep({
      intentId: String(r.intent_id),
      txHash: String(r.tx_hash),
      txRequestHash: text(r.tx_request_hash),
      signerAddress: String(r.signer_address),
      nonce: Number(r.nonce),
      tokenId: text(r.token_id),
      // Without the column, signer.db is from before replacements: every signature is a first one.
      replacesTxHash: text(r.replaces_tx_hash),
      replacedBy: null,
      audited: r.audited === null ? null : Number(r.audited) === 1,
    })
  }
  if (!tables.has('replaced_signatures')) return { byKey }
  type Replaced = { intent_id: unknown; tx_hash: unknown; signer_address: unknown; nonce: unknown; token_id: unknown; replaced_by: unknown; tx_request_hash: unknown }
  // The join is a lookup by signatures' primary key per row, not a scan.
  const replacedRows = db.prepare<[], Replaced>(
    `SELECT r.intent_id, r.tx_hash, r.signer_address, r.nonce, r.token_id, r.replaced_by, s.tx_request_hash
       FROM replaced_signatures r LEFT JOIN signatures s ON s.intent_id = r.intent_id`,
  )
  const replaced: SignerSignature[] = []
  // Which signature each replaced one was replaced by, by the successor's key: a replaced signature that
  // some other replaced one names as its successor was itself a replacement (signature_replaced).
  const predecessorOf = new Map<string, string>()
  for (const r of replacedRows.iterate()) {
    const s: SignerSignature = {
      intentId: String(r.intent_id),
      txHash: String(r.tx_hash),
      txRequestHash: text(r.tx_request_hash),
      signerAddress: String(r.signer_address),
      nonce: Number(r.nonce),
      tokenId: text(r.token_id),
      replacesTxHash: undefined,
      replacedBy: text(r.replaced_by),
      audited: null,
    }
    replaced.push(s)
    if (s.replacedBy !== null) predecessorOf.set(signatureKey(s.intentId, s.replacedBy), s.txHash)
  }
  for (const s of replaced) {
    // Not found: the intent's first signature, or (replaced_signatures keeps one row per txHash) one whose
    // predecessor was the same transaction as another intent's, kept under that intent: either event then.
    s.replacesTxHash = predecessorOf.get(signatureKey(s.intentId, s.txHash))
    keep(s)
  }
  return { byKey }
}

/** How one kept signature's events in the log compare with it. */
interface Seen {
  /** The first event that matches signer.db's record in every field. */
  matched: { seq: number; event: string } | null
  /**
   * The first event of its intent and txHash that does not, and the fields it
   * disagrees on, whether or not another event matches: a matching event
   * written later (the signer's late one, or a re-anchor's) does not make the
   * rewritten one go away (found by review).
   */
  mismatch: { seq: number; event: string; fields: string[] } | null
}

export interface SignatureCheck {
  /**
   * Each signature event row of the walk, in seq order (isSignatureEvent); rows of other events need not be given.
   * A problem when the event names a signature signer.db does not keep (reported at once: a flood of them takes no memory).
   */
  event(r: { seq: number; event: unknown; intent_id: unknown; data: unknown }): AuditProblem | null
  /** After the walk: a problem for each kept signature without a matching event, or whose event no valid checkpoint follows. */
  problems(lastValidCheckpointSeq: number): Generator<AuditProblem>
  /** After the walk: each kept signature with no event that matches it (missing, or only ones that disagree), in signer.db's order. */
  unmatched(): Generator<SignerSignature>
  /** After the walk: each kept signature with an event that disagrees with it, matching event or not. */
  rewritten(): Generator<SignerSignature>
}

/**
 * One pass over the log's signature events (event), matched against
 * signer.db's signatures as they come, then one pass over those signatures
 * (problems). Only signatures with an event of their intent and txHash take
 * memory beyond signer.db's own map.
 */
export function createSignatureCheck(signatures: SignerSignatures): SignatureCheck {
  const seen = new Map<string, Seen>()
  // The transaction requests signer.db keeps each txHash for, under any intent, made at the first event it has no
  // key for: replaced_signatures keeps one row per txHash, so an intent whose transaction was byte for byte another's
  // may be kept under that one. The same transaction is the same request: an event naming another intent's txHash
  // with another txRequestHash is no such twin (found by review: it passed as one).
  let keptRequests: Map<string, (string | null)[]> | null = null
  const keptUnderAnother = (txHash: string, txRequestHash: unknown) => {
    if (!keptRequests) {
      keptRequests = new Map()
      for (const s of signatures.byKey.values()) {
        const key = s.txHash.toLowerCase()
        const requests = keptRequests.get(key) ?? []
        requests.push(s.txRequestHash)
        keptRequests.set(key, requests)
      }
    }
    return (keptRequests.get(txHash.toLowerCase()) ?? []).some((kept) => kept === null || sameHex(txRequestHash, kept))
  }
  return {
    event(r) {
      if (!isSignatureEvent(r.event) || typeof r.intent_id !== 'string' || typeof r.data !== 'string') return null
      let data: unknown
      try {
        data = JSON.parse(r.data)
      } catch {
        return null // a broken row, reported as such by the walk
      }
      const event = r.event as string
      if (typeof data !== 'object' || data === null || Array.isArray(data)) return null // a broken row too, reported as such by the walk
      const d = data as Record<string, unknown>
      if (typeof d.txHash !== 'string') return unknownSignature(r.seq, event, r.intent_id, null)
      const key = signatureKey(r.intent_id, d.txHash)
      const signature = signatures.byKey.get(key)
      // Found by review: only the other way was checked (each kept signature needs its event), so a writer of
      // audit.db could add a signature_replaced making an intent look paid twice, or a signature_created for a
      // denied one, and the signer's next checkpoint sealed it: verify said OK.
      if (!signature) return keptUnderAnother(d.txHash, d.txRequestHash) ? null : unknownSignature(r.seq, event, r.intent_id, d.txHash)
      let s = seen.get(key)
      if (!s) {
        s = { matched: null, mismatch: null }
        seen.set(key, s)
      }
      const fields = disagreements(signature, event, d)
      if (fields.length === 0) s.matched ??= { seq: r.seq, event }
      else s.mismatch ??= { seq: r.seq, event, fields }
      return null
    },
    *problems(lastValidCheckpointSeq) {
      for (const [key, signature] of signatures.byKey) {
        const s = seen.get(key)
        if (s?.mismatch) yield disagreeing(signature, s.mismatch)
        if (s?.matched) {
          if (s.matched.seq > lastValidCheckpointSeq) yield notSealed(signature, s.matched, lastValidCheckpointSeq)
        } else if (!s?.mismatch) {
          yield missing(signature)
        }
      }
    },
    *unmatched() {
      for (const [key, signature] of signatures.byKey) if (!seen.get(key)?.matched) yield signature
    },
    *rewritten() {
      for (const [key, signature] of signatures.byKey) if (seen.get(key)?.mismatch) yield signature
    },
  }
}

/** The event names a signature's event may have. */
function expectedEvents(s: SignerSignature): string[] {
  if (s.replacesTxHash === undefined) return [SIGNATURE_CREATED, SIGNATURE_REPLACED]
  return [s.replacesTxHash === null ? SIGNATURE_CREATED : SIGNATURE_REPLACED]
}

/** Hashes and addresses: the same hex in any case. */
function sameHex(logged: unknown, kept: string): boolean {
  return typeof logged === 'string' && logged.toLowerCase() === kept.toLowerCase()
}

/**
 * The fields of the event's data (as appendSignatureEvent writes them) that
 * disagree with signer.db's record, by name; the event's name first when it
 * is the other signature event. Other fields (late, replacedNonce) are not
 * compared.
 */
function disagreements(s: SignerSignature, event: string, data: Record<string, unknown>): string[] {
  const fields: string[] = []
  const expected = expectedEvents(s)
  if (!expected.includes(event)) fields.push(`its event name (${event}, not ${expected.join(' or ')})`)
  if (s.txRequestHash !== null && !sameHex(data.txRequestHash, s.txRequestHash)) fields.push('txRequestHash')
  if (!sameHex(data.signerAddress, s.signerAddress)) fields.push('signerAddress')
  if (data.nonce !== s.nonce) fields.push('nonce')
  if (data.tokenId !== s.tokenId) fields.push('tokenId')
  if (event === SIGNATURE_REPLACED && typeof s.replacesTxHash === 'string' && !sameHex(data.replacedTxHash, s.replacesTxHash)) fields.push('replacedTxHash')
  return fields
}

/** Values from signer.db and audit.db, escaped as every problem text shows them (see verify.ts shown). */
function shown(value: unknown): string {
  return escapeForDisplay(String(value))
}

function named(s: SignerSignature): string {
  return `signature ${shown(s.txHash)} of intent ${shown(s.intentId)}`
}

function list(items: string[]): string {
  return items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`
}

const REMOVED = 'rows were deleted from the log or the event was rewritten'

function missing(s: SignerSignature): AuditProblem {
  const events = `no ${expectedEvents(s).join(' or ')} event`
  let problem: string
  if (s.replacedBy !== null) {
    problem = `signer.db keeps ${named(s)}, replaced by ${shown(s.replacedBy)}, and the log has ${events} for it: ${REMOVED}`
  } else if (s.audited === true) {
    problem = `signer.db holds ${named(s)} and marks it audited (the signer saw its event committed), but the log has ${events} for it: ${REMOVED}`
  } else {
    problem =
      `signer.db holds ${named(s)}, not yet marked audited, and the log has ${events} for it. A signer stopped between storing a signature ` +
      `and writing its event writes the event (marked late) at its next start: start the signer, then verify again. If it has started since, ${REMOVED}`
  }
  return { seq: null, kind: 'unaudited_signature', problem }
}

function disagreeing(s: SignerSignature, at: { seq: number; event: string; fields: string[] }): AuditProblem {
  return {
    seq: at.seq,
    kind: 'unaudited_signature',
    problem:
      `this ${shown(at.event)} event for ${named(s)} disagrees with signer.db's record of that signature on ${list(at.fields)}: ` +
      `the event was rewritten, or written by another process than the signer (signer.db, which only the signer writes, has what it signed)`,
  }
}

function unknownSignature(seq: number, event: string, intentId: string, txHash: string | null): AuditProblem {
  const what = txHash === null ? `names no txHash (intent ${shown(intentId)})` : `is for signature ${shown(txHash)} of intent ${shown(intentId)}`
  return {
    seq,
    kind: 'unknown_signature',
    problem:
      `this ${shown(event)} event ${what}, which signer.db does not keep: it was written by another process than the signer, or ` +
      `signer.db lost that signature (it was restored from an older copy, or a power cut came before its write reached the disk; the ` +
      `signer then never handed that transaction out)`,
  }
}

function notSealed(s: SignerSignature, at: { seq: number; event: string }, lastValidCheckpointSeq: number): AuditProblem {
  const where = lastValidCheckpointSeq > 0 ? `it comes after the last valid checkpoint (seq ${lastValidCheckpointSeq})` : 'the log has no valid checkpoint'
  return {
    seq: at.seq,
    kind: 'signature_not_sealed',
    problem:
      `this ${shown(at.event)} event for ${named(s)} matches signer.db, but ${where}, so no checkpoint vouches for it and a writer of audit.db could still ` +
      `remove or change it unnoticed. The signer writes a signature's event and a checkpoint sealing it in one commit: verify again after its next ` +
      `checkpoint (at most 10 s while it runs); if the event stays unsealed, a checkpoint after it was removed or the signer refused to sign one (its log says why)`,
  }
}
