import { readFileSync } from 'node:fs'
import Database from 'better-sqlite3'
import { parseAuditPublicKey, SIGNER_CHECKPOINT_TABLE, type LatestCheckpoint } from '../../audit/checkpoint.js'
import type { AuditAnchor } from './verify.js'

/** What verify checks a log against: the signer's public audit key and its latest checkpoint. */
export function loadAuditAnchor(keyFile: string, signerDbFile: string): AuditAnchor {
  return { publicKey: parseAuditPublicKey(readFileSync(keyFile, 'utf8')), latest: readLatestCheckpoint(signerDbFile) }
}

/** The signer's latest checkpoint from signer.db (read-only); null when it has recorded none. */
export function readLatestCheckpoint(signerDbFile: string): LatestCheckpoint | null {
  const db = new Database(signerDbFile, { readonly: true, fileMustExist: true })
  try {
    const table = db.prepare<[string], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?").get(SIGNER_CHECKPOINT_TABLE)
    if (!table) return null
    return db.prepare<[], LatestCheckpoint>(`SELECT seq, hash FROM ${SIGNER_CHECKPOINT_TABLE} WHERE id = 1`).get() ?? null
  } finally {
    db.close()
  }
}
