import type Database from 'better-sqlite3'
import { RATE_LIMIT_WINDOW_MS } from '@countersign/shared'

export interface StoredSignature {
  intentId: string
  txRequestHash: string
  signerAddress: string
  chainId: number
  nonce: number
  signedTx: string
  txHash: string
  tokenId: string | null
  createdAt: number
}

/**
 * Signatures by intent id. The table is what makes sign idempotent (a second
 * sign of an intent returns the stored transaction) and what the signer counts
 * for its own per-wallet rate re-check.
 */
export interface Signatures {
  byIntent(intentId: string): StoredSignature | undefined
  insert(sig: StoredSignature): void
  /** Signatures by this wallet in the sliding hour, not counting `intentId`. */
  recentCount(wallet: string, intentId: string, nowMs: number): number
  markAudited(intentId: string): void
  isAudited(intentId: string): boolean
  /** Signatures whose audit event was not written (the process died between the two commits). */
  unaudited(): StoredSignature[]
}

interface Row {
  intent_id: string
  tx_request_hash: string
  signer_address: string
  chain_id: number
  nonce: number
  signed_tx: string
  tx_hash: string
  token_id: string | null
  created_at: number
}

export function createSignatures(db: Database.Database): Signatures {
  const get = db.prepare<[string], Row>('SELECT * FROM signatures WHERE intent_id = ?')
  const ins = db.prepare(
    `INSERT INTO signatures (intent_id, tx_request_hash, signer_address, chain_id, nonce, signed_tx, tx_hash, token_id, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  )
  const count = db.prepare<[string, string, number], { n: number }>(
    'SELECT COUNT(*) AS n FROM signatures WHERE signer_address = ? AND intent_id <> ? AND created_at > ?',
  )
  const mark = db.prepare('UPDATE signatures SET audited = 1 WHERE intent_id = ?')
  const audited = db.prepare<[string], { audited: number }>('SELECT audited FROM signatures WHERE intent_id = ?')
  const missing = db.prepare<[], Row>('SELECT * FROM signatures WHERE audited = 0 ORDER BY created_at')
  const toSignature = (r: Row): StoredSignature => ({
    intentId: r.intent_id,
    txRequestHash: r.tx_request_hash,
    signerAddress: r.signer_address,
    chainId: r.chain_id,
    nonce: r.nonce,
    signedTx: r.signed_tx,
    txHash: r.tx_hash,
    tokenId: r.token_id,
    createdAt: r.created_at,
  })
  return {
    markAudited(intentId) {
      mark.run(intentId)
    },
    isAudited(intentId) {
      return audited.get(intentId)?.audited === 1
    },
    unaudited() {
      return missing.all().map(toSignature)
    },
    byIntent(intentId) {
      const r = get.get(intentId)
      return r && toSignature(r)
    },
    insert(s) {
      ins.run(s.intentId, s.txRequestHash, s.signerAddress.toLowerCase(), s.chainId, s.nonce, s.signedTx, s.txHash, s.tokenId, s.createdAt)
    },
    recentCount(wallet, intentId, nowMs) {
      return count.get(wallet.toLowerCase(), intentId, nowMs - RATE_LIMIT_WINDOW_MS)?.n ?? 0
    },
  }
}
