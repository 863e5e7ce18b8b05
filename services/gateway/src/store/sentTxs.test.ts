import { mkdtempSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import Database from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import { openGatewayDb } from './gatewayDb.js'
import { createSentTxs, type SentTx } from './sentTxs.js'

const tx = (over: Partial<SentTx> = {}): SentTx => ({
  intentId: 'a0c6e0f2-3b8e-4f0e-9d1c-2b6f5a7e8d90',
  chainId: 8453,
  wallet: '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266',
  txRequestHash: `0x${'11'.repeat(32)}`,
  nonce: 7,
  txHash: `0x${'ab'.repeat(32)}`,
  signedTx: '0x02f8',
  broadcastOk: false,
  deadline: 1_000,
  ...over,
})

describe('sent transactions', () => {
  it('keep the earliest deadline they were signed or sent under, whatever a later save names', () => {
    const sent = createSentTxs(openGatewayDb(path.join(mkdtempSync(path.join(os.tmpdir(), 'cs-sent-')), 'gateway.db')))
    sent.save(tx({ deadline: 1_000 }), 1)
    sent.save(tx({ deadline: 5_000, broadcastOk: true }), 2)
    expect(sent.byIntent(tx().intentId)).toMatchObject({ deadline: 1_000, broadcastOk: true })
    sent.save(tx({ deadline: 500 }), 3)
    expect(sent.byIntent(tx().intentId)?.deadline).toBe(500)
    // A replacement is another transaction, signed for a body of its own: its deadline is that body's.
    sent.save(tx({ txHash: `0x${'cd'.repeat(32)}`, nonce: 8, deadline: 4_000 }), 4)
    expect(sent.byIntent(tx().intentId)).toMatchObject({ txHash: `0x${'cd'.repeat(32)}`, deadline: 4_000 })
  })

  it('a gateway.db of the earlier layout gains the column; its rows have no deadline until saved again', () => {
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'cs-sent-')), 'gateway.db')
    const old = new Database(file)
    old.exec(`CREATE TABLE sent_txs (intent_id TEXT PRIMARY KEY, chain_id INTEGER NOT NULL, wallet TEXT NOT NULL, tx_request_hash TEXT NOT NULL,
      nonce INTEGER NOT NULL, tx_hash TEXT NOT NULL, signed_tx TEXT NOT NULL, broadcast_ok INTEGER NOT NULL, updated_at INTEGER NOT NULL)`)
    old.prepare('INSERT INTO sent_txs VALUES (?, 8453, ?, ?, 7, ?, ?, 0, 1)').run(tx().intentId, tx().wallet.toLowerCase(), tx().txRequestHash, tx().txHash, tx().signedTx)
    old.close()
    const sent = createSentTxs(openGatewayDb(file))
    expect(sent.byIntent(tx().intentId)?.deadline).toBeNull()
    sent.save(tx({ deadline: 2_000 }), 2)
    expect(sent.byIntent(tx().intentId)?.deadline).toBe(2_000)
  })
})
