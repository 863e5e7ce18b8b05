import { closeSync, constants, fstatSync, openSync, readFileSync } from 'node:fs'
import { assertDatabaseFile } from '../../files/privateFiles.js'
import { OperatorError } from '../../operatorError.js'
import Database from 'better-sqlite3'
import { parseAuditPublicKey, SIGNER_CHECKPOINT_TABLE, type LatestCheckpoint } from '../../audit/checkpoint.js'
import { DamagedDatabaseError, databaseDamageProblem, databaseFileProblem } from './fileCheck.js'
import type { AuditAnchor } from './verify.js'

/** What verify checks a log against: the signer's public audit key and its latest checkpoint. */
export function loadAuditAnchor(keyFile: string, signerDbFile: string): AuditAnchor {
  // The key file: a regular file (a FIFO is refused at once, not waited on).
  const key = readPublicKeyFile(keyFile)
  return { publicKey: parseAuditPublicKey(key), latest: readLatestCheckpoint(signerDbFile) }
}

/**
 * The signer's latest checkpoint from signer.db (read-only); null when it has
 * recorded none. A damaged signer.db throws DamagedDatabaseError: a page
 * that lost the row reads as "no checkpoint yet", and the log would then be
 * blamed for holding checkpoints the signer never recorded.
 */
export function readLatestCheckpoint(signerDbFile: string): LatestCheckpoint | null {
  assertDatabaseFile(signerDbFile)
  const db = new Database(signerDbFile, { readonly: true, fileMustExist: true })
  try {
    const damage = databaseFileProblem(db, signerDbFile)
    if (damage !== null) throw new DamagedDatabaseError(damage)
    const table = db.prepare<[string], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?").get(SIGNER_CHECKPOINT_TABLE)
    if (!table) return null
    return db.prepare<[], LatestCheckpoint>(`SELECT seq, hash FROM ${SIGNER_CHECKPOINT_TABLE} WHERE id = 1`).get() ?? null
  } catch (err) {
    const damage = databaseDamageProblem(err, signerDbFile)
    throw damage === null ? err : new DamagedDatabaseError(damage)
  } finally {
    db.close()
  }
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
