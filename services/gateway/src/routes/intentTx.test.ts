import { randomUUID } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import { WALLET } from '@countersign/shared/testing/intents'
import { makeTestGateway } from '../app.testkit.js'
import { createSentTxs } from '../store/sentTxs.js'

type Gw = Awaited<ReturnType<typeof makeTestGateway>>
let gw: Gw | undefined
afterEach(async () => {
  await gw?.close()
  gw = undefined
})

const TX_HASH = `0x${'ab'.repeat(32)}`

describe('GET /v1/intents/:intentId/tx', () => {
  it('answers the transaction signed for the intent, by its id alone, without the signed bytes', async () => {
    gw = await makeTestGateway()
    const intentId = randomUUID()
    createSentTxs(gw.db).save({ intentId, chainId: 8453, wallet: WALLET, txRequestHash: `0x${'11'.repeat(32)}`, nonce: 7, txHash: TX_HASH, signedTx: '0x02f8aa', broadcastOk: true, deadline: null }, gw.clock())
    const res = await gw.app.inject({ method: 'GET', url: `/v1/intents/${intentId}/tx` })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ intentId, chainId: 8453, wallet: WALLET, nonce: 7, txHash: TX_HASH, broadcast: true })
  })

  it('is 404 intent_not_signed for an intent nothing was signed for, and 400 in the validation shape for an id that is not a UUID', async () => {
    gw = await makeTestGateway()
    const unknown = randomUUID()
    const res = await gw.app.inject({ method: 'GET', url: `/v1/intents/${unknown}/tx` })
    expect(res.statusCode).toBe(404)
    expect(res.json()).toEqual({ error: 'intent_not_signed', message: expect.stringContaining(`no signed transaction for intent ${unknown}`) })
    const bad = await gw.app.inject({ method: 'GET', url: '/v1/intents/not-a-uuid/tx' })
    expect(bad.statusCode).toBe(400)
    expect(bad.json()).toEqual({ statusCode: 400, error: 'Bad Request', message: expect.stringContaining('params/intentId') })
  })

  it('finds a signed intent by its id in upper case too (found by review: a 400), and is 400, not "nothing signed", for another spelling (urn:uuid:, braces)', async () => {
    gw = await makeTestGateway()
    const intentId = randomUUID()
    createSentTxs(gw.db).save({ intentId, chainId: 8453, wallet: WALLET, txRequestHash: `0x${'11'.repeat(32)}`, nonce: 7, txHash: TX_HASH, signedTx: '0x02f8aa', broadcastOk: true, deadline: null }, gw.clock())
    // The intent routes store the id in lower case, whichever case the client wrote it in; the lookup reads it the same way.
    const shouted = await gw.app.inject({ method: 'GET', url: `/v1/intents/${intentId.toUpperCase()}/tx` })
    expect(shouted.statusCode).toBe(200)
    expect(shouted.json()).toMatchObject({ intentId, txHash: TX_HASH })
    // Before: 404 intent_not_signed, which the clients read as "nothing was signed": a resend would have been a second payment.
    for (const spelling of [`urn:uuid:${intentId}`, `{${intentId}}`]) {
      const res = await gw.app.inject({ method: 'GET', url: `/v1/intents/${encodeURIComponent(spelling)}/tx` })
      expect(res.statusCode, spelling).toBe(400)
      expect(res.json()).toEqual({ statusCode: 400, error: 'Bad Request', message: expect.stringMatching(/^params\/intentId must match pattern/) })
    }
  })
})
