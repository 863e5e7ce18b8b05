// A transaction signed before its intent's deadline and never mined is not
// sent again after that deadline, whatever deadline a retry names. Found by
// review: the rule read the retry's deadline, and for a transfer or an
// approve the deadline is not in the transaction, so a retry with the same
// id and a later deadline matched it and re-broadcast it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTransaction, defaultRouterTable, normalizeIntent } from '@countersign/shared'
import { actions, makeIntent, WALLET } from '@countersign/shared/testing/intents'
import { makeTestGateway, testClock } from '../app.testkit.js'
import { startJsonRpcNode, type JsonRpcNode } from '../chain/jsonRpcNode.testkit.js'
import { createSentTxs } from '../store/sentTxs.js'

/** A node that knows nothing of the transaction and whose pending count is still at its nonce: the transaction is open. */
let node: JsonRpcNode
let nodeUrl: string
const methodsCalled = () => node.methods
beforeAll(async () => {
  const answers: Record<string, unknown> = { eth_chainId: '0x2105', eth_getTransactionCount: '0x7', eth_sendRawTransaction: `0x${'ab'.repeat(32)}` }
  node = await startJsonRpcNode((call) => (call.method in answers ? { result: answers[call.method] } : { error: { code: -32601, message: `${call.method} is not served here` } }))
  nodeUrl = node.url
})
afterAll(() => node.close())

describe('sign-and-send of an intent signed before its deadline, retried after it', () => {
  it('is refused with the same body and with a later deadline, and nothing is broadcast', async () => {
    const clock = testClock()
    const gw = await makeTestGateway({ clock, rpcUrls: { 8453: nodeUrl } })
    try {
      const nowS = Math.floor(clock() / 1000)
      const intent = makeIntent({ action: actions.native(), nowMs: clock(), deadline: nowS + 60 })
      const built = buildTransaction(normalizeIntent(intent), defaultRouterTable())
      // Signed and sent earlier under that deadline; its broadcast failed: gateway.db holds it at nonce 7.
      createSentTxs(gw.db).save(
        { intentId: intent.id, chainId: 8453, wallet: WALLET, txRequestHash: built.txRequestHash, nonce: 7, txHash: `0x${'ab'.repeat(32)}`, signedTx: '0x02f8', broadcastOk: false, deadline: nowS + 60 },
        clock(),
      )
      clock.advance(120_000)
      node.methods.length = 0
      const same = await gw.app.inject({ method: 'POST', url: '/v1/tx/sign-and-send', payload: { intent } })
      expect(same.statusCode).toBe(403)
      expect(same.json()).toMatchObject({ error: 'policy_denied' })
      const later = { ...intent, constraints: { ...intent.constraints, deadline: nowS + 3600 } }
      const moved = await gw.app.inject({ method: 'POST', url: '/v1/tx/sign-and-send', payload: { intent: later } })
      expect(moved.statusCode, moved.body).toBe(403)
      expect((moved.json() as { reasons: string[] }).reasons.join(' ')).toMatch(new RegExp(`^deadline ${nowS + 60} \\(.*\\) has passed: transaction 0xabab`))
      expect(methodsCalled()).not.toContain('eth_sendRawTransaction')
    } finally {
      await gw.close()
    }
  })
})
