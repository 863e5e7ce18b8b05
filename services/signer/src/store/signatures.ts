import type Database from 'better-sqlite3'
import { RATE_LIMIT_WINDOW_MS } from '@countersign/shared'
import { RecentWindow } from './recentWindow.js'

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
  /**
   * The txHash of this intent's earlier signature that this one replaced (its
   * nonce went to another transaction, so it could never be mined); null for
   * a first signature.
   */
  replacesTxHash: string | null
}

/**
 * Signatures by intent id. The table is what makes sign idempotent (a second
 * sign of an intent returns the stored transaction) and what the signer counts
 * for its own per-wallet rate re-check.
 */
export interface Signatures {
  byIntent(intentId: string): StoredSignature | undefined
  insert(sig: StoredSignature): void
  /**
   * Makes `sig` the intent's signature in place of `old`, which is kept in
   * replaced_signatures (and still counts for the rate re-check). Call inside
   * a transaction that has checked `old` is still the stored one.
   */
  replace(old: StoredSignature, sig: StoredSignature, nowMs: number): void
  /**
   * Signatures by this wallet in the sliding hour, replaced ones included
   * (each was one more signature). A replacement counts the signature it
   * replaces as well: the signer cannot see that one is dead, only the
   * gateway says so, and a gateway that lied would otherwise get one
   * mineable transaction more than the limit.
   */
  recentCount(wallet: string, nowMs: number): number
  /** A replaced signature by its txHash. */
  replaced(txHash: string): { nonce: number; replacedBy: string } | undefined
  /**
   * Sets the audited flag of the intent's signature `txHash`, and of no other:
   * a flag set a turn after that signature's event must not land on a
   * replacement stored meanwhile, whose own event may never commit.
   */
  markAudited(intentId: string, txHash: string): void
  /** Whether the intent's stored signature is `txHash` and its audited flag is set. */
  isAudited(intentId: string, txHash: string): boolean
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
  replaces_tx_hash: string | null
}

export function createSignatures(db: Database.Database): Signatures {
  const get = db.prepare<[string], Row>('SELECT * FROM signatures WHERE intent_id = ?')
  const ins = db.prepare(
    `INSERT INTO signatures (intent_id, tx_request_hash, signer_address, chain_id, nonce, signed_tx, tx_hash, token_id, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  )
  // Every time that counts for a wallet (its signatures' created_at, its
  // replaced signatures' replaced_at), read once per wallet and then kept up
  // to date by insert and replace: this connection is signer.db's only
  // writer. A transaction that fails after insert/replace leaves one time too
  // many, which can only make the re-check stricter.
  const timesOf = db.prepare<[string, number, string, number], { t: number }>(
    `SELECT created_at AS t FROM signatures WHERE signer_address = ? AND created_at > ?
     UNION ALL SELECT replaced_at AS t FROM replaced_signatures WHERE signer_address = ? AND replaced_at > ?`,
  )
  const windows = new Map<string, RecentWindow>()
  // Kept beyond the window by as much again: a clock stepped back by up to an hour still counts right.
  const keepMs = RATE_LIMIT_WINDOW_MS
  const windowOf = (wallet: string, since: number): RecentWindow => {
    let w = windows.get(wallet)
    if (!w) {
      const from = since - keepMs
      w = new RecentWindow(timesOf.all(wallet, from, wallet, from).map((r) => r.t), keepMs)
      windows.set(wallet, w)
    }
    return w
  }
  const loaded = (wallet: string) => windows.get(wallet.toLowerCase())
  // OR IGNORE: two intents whose transactions were byte for byte the same (same wallet, call, nonce and
  // fees) share one txHash; the second replaced copy is that same transaction, already kept with its
  // nonce (all replaced() reports). A plain INSERT failed there on every retry, and that intent could
  // never be replaced.
  const keepReplaced = db.prepare(
    `INSERT OR IGNORE INTO replaced_signatures (tx_hash, intent_id, signer_address, chain_id, nonce, signed_tx, token_id, created_at, replaced_at, replaced_by)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  )
  const overwrite = db.prepare(
    `UPDATE signatures SET tx_request_hash = ?, signer_address = ?, chain_id = ?, nonce = ?, signed_tx = ?, tx_hash = ?, token_id = ?,
       created_at = ?, replaces_tx_hash = ?, audited = 0 WHERE intent_id = ? AND tx_hash = ?`,
  )
  // By intent and transaction: the row may hold a replacement by the time the flag is written (see markAudited).
  const mark = db.prepare('UPDATE signatures SET audited = 1 WHERE intent_id = ? AND tx_hash = ?')
  const audited = db.prepare<[string, string], { audited: number }>('SELECT audited FROM signatures WHERE intent_id = ? AND tx_hash = ?')
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
    replacesTxHash: r.replaces_tx_hash,
  })
  const replacedByHash = db.prepare<[string], { nonce: number; replaced_by: string }>('SELECT nonce, replaced_by FROM replaced_signatures WHERE tx_hash = ?')
  return {
    replaced(txHash) {
      const r = replacedByHash.get(txHash)
      return r && { nonce: r.nonce, replacedBy: r.replaced_by }
    },
    markAudited(intentId, txHash) {
      mark.run(intentId, txHash)
    },
    isAudited(intentId, txHash) {
      return audited.get(intentId, txHash)?.audited === 1
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
      loaded(s.signerAddress)?.add(s.createdAt)
    },
    replace(old, s, nowMs) {
      keepReplaced.run(old.txHash, old.intentId, old.signerAddress, old.chainId, old.nonce, old.signedTx, old.tokenId, old.createdAt, nowMs, s.txHash)
      const changed = overwrite.run(s.txRequestHash, s.signerAddress.toLowerCase(), s.chainId, s.nonce, s.signedTx, s.txHash, s.tokenId, s.createdAt, old.txHash, s.intentId, old.txHash).changes
      if (changed !== 1) throw new Error(`signature ${old.txHash} of intent ${old.intentId} is no longer the stored one`)
      // The old row's created_at leaves `signatures`; its replaced_at and the new created_at count.
      const was = loaded(old.signerAddress)
      was?.remove(old.createdAt)
      was?.add(nowMs)
      loaded(s.signerAddress)?.add(s.createdAt)
    },
    recentCount(wallet, nowMs) {
      const since = nowMs - RATE_LIMIT_WINDOW_MS
      return windowOf(wallet.toLowerCase(), since).countAfter(since)
    },
  }
}
