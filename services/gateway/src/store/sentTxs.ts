import type Database from 'better-sqlite3'

export interface SentTx {
  intentId: string
  chainId: number
  wallet: string
  txRequestHash: string
  nonce: number
  txHash: string
  signedTx: string
  broadcastOk: boolean
  /**
   * The earliest constraints.deadline (Unix seconds) of the bodies this
   * transaction was signed or sent for; null for a row of an earlier layout.
   * A retry after it is not sent again, whatever deadline the retry names.
   * A replacement (another transaction, signed with a new approval) starts
   * again from the deadline of the body it was signed for.
   */
  deadline: number | null
}

/**
 * Signed transactions by intent id. A signed transaction is public once sent,
 * so the gateway may keep it: a retry of the same intent re-broadcasts it
 * instead of asking for a new signature. When the signer replaced an intent's
 * signature (the old one could never be mined), the row holds the new one.
 */
export interface SentTxs {
  byIntent(intentId: string): SentTx | undefined
  /** This wallet's transactions (the current one of each intent) at `nonce`. */
  atNonce(chainId: number, wallet: string, nonce: number): SentTx[]
  save(tx: SentTx, nowMs: number): void
}

interface Row {
  intent_id: string
  chain_id: number
  wallet: string
  tx_request_hash: string
  nonce: number
  tx_hash: string
  signed_tx: string
  broadcast_ok: number
  deadline: number | null
}

export function createSentTxs(db: Database.Database): SentTxs {
  const get = db.prepare<[string], Row>('SELECT * FROM sent_txs WHERE intent_id = ?')
  const atNonce = db.prepare<[number, string, number], Row>('SELECT * FROM sent_txs WHERE chain_id = ? AND wallet = ? AND nonce = ?')
  const upsert = db.prepare(`
    INSERT INTO sent_txs (intent_id, chain_id, wallet, tx_request_hash, nonce, tx_hash, signed_tx, broadcast_ok, updated_at, deadline)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (intent_id) DO UPDATE SET nonce = excluded.nonce, tx_hash = excluded.tx_hash, signed_tx = excluded.signed_tx,
      broadcast_ok = excluded.broadcast_ok, updated_at = excluded.updated_at,
      deadline = CASE WHEN excluded.tx_hash = sent_txs.tx_hash
        THEN min(coalesce(sent_txs.deadline, excluded.deadline), coalesce(excluded.deadline, sent_txs.deadline))
        ELSE excluded.deadline END`)
  return {
    byIntent(intentId) {
      const r = get.get(intentId)
      return r && toSentTx(r)
    },
    atNonce(chainId, wallet, nonce) {
      return atNonce.all(chainId, wallet.toLowerCase(), nonce).map(toSentTx)
    },
    save(t, nowMs) {
      upsert.run(t.intentId, t.chainId, t.wallet.toLowerCase(), t.txRequestHash, t.nonce, t.txHash, t.signedTx, t.broadcastOk ? 1 : 0, nowMs, t.deadline)
    },
  }
}

function toSentTx(r: Row): SentTx {
  return {
    intentId: r.intent_id,
    chainId: r.chain_id,
    wallet: r.wallet,
    txRequestHash: r.tx_request_hash,
    nonce: r.nonce,
    txHash: r.tx_hash,
    signedTx: r.signed_tx,
    broadcastOk: r.broadcast_ok === 1,
    deadline: r.deadline,
  }
}
