// A transaction signed before and never mined is not sent again once policy
// denies its intent. Found in the review of 2026-12-07: sign-and-send answered
// a retry from sent_txs before asking policy, so an intent whose broadcast had
// failed was re-broadcast after its recipient left the allowlist: a payment
// policy refuses, made now.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTransaction, defaultRouterTable, normalizeIntent, type PolicyConfig } from '@countersign/shared'
import { actions, makeIntent, WALLET } from '@countersign/shared/testing/intents'
import { makeTestGateway, testClock } from '../app.testkit.js'
import { startJsonRpcNode, type JsonRpcNode } from '../chain/jsonRpcNode.testkit.js'
import { createSentTxs } from '../store/sentTxs.js'

const TX_HASH = `0x${'ab'.repeat(32)}`
const OTHER_RECIPIENT = '0x4444444444444444444444444444444444444444'

/** A node that knows nothing of the transaction and whose mined count is still at its nonce: the transaction is open. */
let node: JsonRpcNode
beforeAll(async () => {
  const answers: Record<string, unknown> = { eth_chainId: '0x2105', eth_getTransactionCount: '0x7', eth_sendRawTransaction: TX_HASH }
  node = await startJsonRpcNode((call) => (call.method in answers ? { result: answers[call.method] } : { error: { code: -32601, message: `${call.method} is not served here` } }))
})
afterAll(() => node.close())

/** Retries, on a gateway with `policy`, a transfer signed earlier at nonce 7 whose broadcast failed; what it answered and whether it broadcast. */
async function retrySignedBefore(policy: Partial<PolicyConfig>, before?: (post: (url: string, payload: object) => Promise<number>, nowMs: number) => Promise<void>) {
  const clock = testClock()
  const gw = await makeTestGateway({ clock, rpcUrls: { 8453: node.url }, policy })
  try {
    const intent = makeIntent({ action: actions.native(), nowMs: clock() })
    const built = buildTransaction(normalizeIntent(intent), defaultRouterTable())
    createSentTxs(gw.db).save(
      { intentId: intent.id, chainId: 8453, wallet: WALLET, txRequestHash: built.txRequestHash, nonce: 7, txHash: TX_HASH, signedTx: '0x02f8', broadcastOk: false, deadline: intent.constraints.deadline },
      clock(),
    )
    await before?.(async (url, payload) => (await gw.app.inject({ method: 'POST', url, payload })).statusCode, clock())
    node.methods.length = 0
    const res = await gw.app.inject({ method: 'POST', url: '/v1/tx/sign-and-send', payload: { intent } })
    const audited = gw.audit.list({ limit: 20, intentId: intent.id }).filter((e) => e.event === 'signing_denied')
    return { status: res.statusCode, body: res.json() as Record<string, unknown>, broadcast: node.methods.includes('eth_sendRawTransaction'), audited, recipient: (intent.action as { to: string }).to }
  } finally {
    await gw.close()
  }
}

describe('sign-and-send of an intent signed before, not mined, retried', () => {
  it('sends the transaction again while policy still allows the intent', async () => {
    const { status, body, broadcast } = await retrySignedBefore({})
    expect(status, JSON.stringify(body)).toBe(200)
    expect(body).toMatchObject({ txHash: TX_HASH, broadcast: true })
    expect(broadcast).toBe(true)
  })

  it('is refused, and nothing is broadcast, once its recipient is off the allowlist', async () => {
    const { status, body, broadcast, audited, recipient } = await retrySignedBefore({ recipientAllowlist: [OTHER_RECIPIENT] })
    expect(status, JSON.stringify(body)).toBe(403)
    expect(body.error).toBe('policy_denied')
    const reasons = body.reasons as string[]
    expect(reasons[0]).toMatch(new RegExp(`${recipient} is not in the recipient allowlist`, 'i'))
    expect(reasons.at(-1)).toMatch(new RegExp(`^transaction ${TX_HASH} \\(nonce 7\\), signed before policy denied this intent and not mined, is not sent again`))
    expect(broadcast).toBe(false)
    expect(audited.map((e) => e.data)).toEqual([expect.objectContaining({ reason: 'policy_deny', txHash: TX_HASH, nonce: 7, reasonCodes: ['recipient_not_in_allowlist'] })])
  })

  it('is sent again when the wallet reached its hourly limit since: the intent was counted when it was decided', async () => {
    const { status, broadcast } = await retrySignedBefore({ maxTxPerHour: 1 }, async (post, nowMs) => {
      // Another intent of the wallet fills the window.
      expect(await post('/v1/tx/build', makeIntent({ action: actions.native(), nowMs }))).toBe(200)
      expect(await post('/v1/tx/build', makeIntent({ action: actions.native(), nowMs }))).toBe(403)
    })
    expect(status).toBe(200)
    expect(broadcast).toBe(true)
  })

  it('is refused when the wallet is stopped (maxTxPerHour 0): nothing of it goes out', async () => {
    const { status, body, broadcast } = await retrySignedBefore({ maxTxPerHour: 0 })
    expect(status, JSON.stringify(body)).toBe(403)
    expect((body.reasons as string[])[0]).toMatch(/^rate limit exceeded: 0 transactions in the last hour, limit 0/)
    expect(broadcast).toBe(false)
  })
})
