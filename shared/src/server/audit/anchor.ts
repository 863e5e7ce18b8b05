import { closeSync, constants, fstatSync, openSync, readFileSync } from 'node:fs'
import { assertDatabaseFile } from '../../files/privateFiles.js'
import { OperatorError } from '../../operatorError.js'
import Database from 'better-sqlite3'
import { parseAuditPublicKey, SIGNER_CHECKPOINT_TABLE, type LatestCheckpoint } from '../../audit/checkpoint.js'
import { DamagedDatabaseError, databaseDamageProblem, databaseFileProblem } from './fileCheck.js'
import { readSignerSignatures, type SignerSignatures } from './signatureCheck.js'
import type { AuditAnchor } from './verify.js'

/**
 * What verify checks a log against: the signer's public audit key, its latest
 * checkpoint and (unless `signatures` is false) the signatures it keeps.
 */
export function loadAuditAnchor(keyFile: string, signerDbFile: string, read: { signatures: boolean } = { signatures: true }): AuditAnchor {
  // The key file: a regular file (a FIFO is refused at once, not waited on).
  const key = readPublicKeyFile(keyFile)
  const publicKey = parseAuditPublicKey(key)
  const { latest, signatures } = readSignerDb(signerDbFile, read)
  return read.signatures ? { publicKey, latest, signatures } : { publicKey, latest }
}

/**
 * The signer's latest checkpoint from signer.db (read-only); null when it has
 * recorded none. A damaged signer.db throws DamagedDatabaseError: a page
 * that lost the row reads as "no checkpoint yet", and the log would then be
 * blamed for holding checkpoints the signer never recorded.
 */
export function readLatestCheckpoint(signerDbFile: string): LatestCheckpoint | null {
  return readSignerDb(signerDbFile, { signatures: false }).latest
}

/**
 * What verify reads from signer.db (read-only): the latest checkpoint and,
 * when asked, the signatures (null when it keeps no signatures table), both
 * in one read transaction, so both are from the same moment, before the log
 * is walked: a signature stored while a long walk runs is not held against a
 * log read before its event. Damaged: DamagedDatabaseError (see
 * readLatestCheckpoint).
 */
export function readSignerDb(signerDbFile: string, read: { signatures: boolean }): { latest: LatestCheckpoint | null; signatures: SignerSignatures | null } {
  assertDatabaseFile(signerDbFile)
  const db = new Database(signerDbFile, { readonly: true, fileMustExist: true })
  try {
    const damage = databaseFileProblem(db, signerDbFile)
    if (damage !== null) throw new DamagedDatabaseError(damage)
    return db.transaction(() => ({ latest: latestCheckpoint(db), signatures: read.signatures ? readSignerSignatures(db) : null }))()
  } catch (err) {
    const damage = databaseDamageProblem(err, signerDbFile)
    throw damage === null ? err : new DamagedDatabaseError(damage)
  } finally {
    db.close()
  }
}

function latestCheckpoint(db: Database.Database): LatestCheckpoint | null {
  const table = db.prepare<[string], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?").get(SIGNER_CHECKPOINT_TABLE)
  if (!table) return null
  return db.prepare<[], LatestCheckpoint>(`SELECT seq, hash FROM ${SIGNER_CHECKPOINT_TABLE} WHERE id = 1`).get() ?? null
}

function readPublicKeyFile(file: string): string {
  const fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK)
  try {
    const st = fstatSync(fd)
    if (!st.isFile()) throw new OperatorError(`${file} is not a regular file (the signer's audit-key.pub is expected there)`)
    if (st.size > 64 * 1024) throw new OperatorError(`${file} is larger than a public key file`)
    return readFileSync(fd, 'utf8')
  } finally {
    closeSync(fd)
  }
}
