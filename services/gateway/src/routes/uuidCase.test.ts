// An intent id or approval token in upper case is the same UUID (RFC 4122:
// case-insensitive on input; Swift's uuidString and macOS uuidgen write upper
// case). Found by review: the gateway refused it with 400. It now takes either
// case and lower-cases it at the entry, so one intent has one id for its
// hash, its token, its reservation, its audit rows and the lookup by id; the
// signer and the approver, whose schemas stay lower-case only, never see
// another spelling (the fakes below validate with their real schemas).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import {
  approverMethods,
  createAjv,
  describeValidationErrors,
  intentHash,
  noPreflight,
  normalizeIntent,
  requestApprovalParamsSchema,
  signParamsSchema,
  signerMethods,
  type AuditLog,
  type SignParams,
  type TxIntent,
} from '@countersign/shared'
import { actions, makeIntent, WALLET } from '@countersign/shared/testing/intents'
import { makeTestGateway } from '../app.testkit.js'
import { startJsonRpcNode, type JsonRpcNode } from '../chain/jsonRpcNode.testkit.js'
import type { RunPreflight } from './approveRequest.js'

type Gw = Awaited<ReturnType<typeof makeTestGateway>>
let gw: Gw | undefined
afterEach(async () => {
  await gw?.close()
  gw = undefined
})

const TOKEN = '6f1c3d52-8a4e-4b7f-9d0e-2c5a1b3e4f60'
const TX_HASH = `0x${'ab'.repeat(32)}`
const post = (g: Gw, url: string, payload: object) => g.app.inject({ method: 'POST', url, payload })
const upper = (intent: TxIntent): TxIntent => ({ ...intent, id: intent.id.toUpperCase() })

/** Validates with a schema of the signer's or the approver's socket, as they do; throws what they would answer. */
function checkedBy(schema: object) {
  const validate = createAjv().compile(schema)
  return (params: unknown) => {
    if (!validate(params)) throw new Error(`refused by the socket's schema: ${describeValidationErrors(validate.errors, 'params')}`)
  }
}

const cleanPreflight =
  (audit: AuditLog): RunPreflight =>
  async (intent) => ({
    findings: { ...noPreflight(), simulationSuccess: true, gasEstimate: '21000' },
    recorded: audit.append({ intentId: intent.id, event: 'preflight_completed', data: { simulationSuccess: true } }),
  })

describe('an upper-case intent id', () => {
  it('is built as its lower-case form: the same answer and the same transaction, audited under the lower-case id', async () => {
    gw = await makeTestGateway({ policy: { maxTxPerHour: 1000 } })
    const intent = makeIntent({ action: actions.native(), nowMs: gw.clock() })
    const shouted = await post(gw, '/v1/tx/build', upper(intent))
    expect(shouted.statusCode, shouted.body).toBe(200)
    const plain = await post(gw, '/v1/tx/build', intent)
    expect(shouted.json()).toEqual(plain.json())
    expect(shouted.json()).toMatchObject({ intentId: intent.id })
    const ids = new Set(gw.audit.list({ limit: 10 }).map((e) => e.intentId))
    expect([...ids]).toEqual([intent.id])
  })

  it('asks the approver about the lower-case intent (the same intent hash), and a re-send in the other case is that intent, not a 409', async () => {
    const seen: string[] = []
    const checkParams = checkedBy(requestApprovalParamsSchema)
    gw = await makeTestGateway({
      policy: { requireApprovalAbove: { valueWei: '1' } },
      preflight: cleanPreflight,
      approver: async (method, params) => {
        if (method === approverMethods.approvalUpdates) return { cursor: 'c0', reset: false, outcomes: [] }
        checkParams(params)
        seen.push(intentHash((params as { intent: TxIntent }).intent))
        return { state: 'decided', outcome: { approved: true, requestId: 'r-1', txRequestHash: `0x${'00'.repeat(32)}`, approvalTokenId: TOKEN } }
      },
    })
    const intent = makeIntent({ action: actions.native(), nowMs: gw.clock() })
    const shouted = await post(gw, '/v1/tx/approve-request', upper(intent))
    expect(shouted.statusCode, shouted.body).toBe(200)
    expect(shouted.json()).toMatchObject({ intentId: intent.id, approvalTokenId: TOKEN })
    const plain = await post(gw, '/v1/tx/approve-request', intent)
    expect(plain.statusCode, plain.body).toBe(200)
    expect(plain.json()).toEqual(shouted.json())
    expect(seen).toEqual([intentHash(normalizeIntent(intent)), intentHash(normalizeIntent(intent))])
    // The id the request holds is the lower-case one, whichever case a later body uses.
    const other = await post(gw, '/v1/tx/approve-request', upper({ ...intent, action: actions.native('7') }))
    expect(other.statusCode).toBe(409)
    expect(other.json()).toMatchObject({ error: 'intent_conflict' })
  })

  it('a UUID in another spelling than 8-4-4-4-12 hex digits is still a 400 (urn:uuid:, braces)', async () => {
    gw = await makeTestGateway()
    const intent = makeIntent({ action: actions.native(), nowMs: gw.clock() })
    for (const id of [`urn:uuid:${intent.id}`, `{${intent.id}}`, intent.id.replace(/-/g, '')]) {
      const res = await post(gw, '/v1/tx/build', { ...intent, id })
      expect(res.statusCode, id).toBe(400)
      expect(res.json().message).toMatch(/^body\/id must match pattern/)
    }
  })
})

describe('sign-and-send with an upper-case intent id and approvalTokenId', () => {
  let node: JsonRpcNode
  beforeAll(async () => {
    // A chain on which a native transfer simulates and estimates at 21000 gas, at a base fee of 1 gwei, and takes any transaction.
    const block = { number: '0x10', hash: `0x${'12'.repeat(32)}`, parentHash: `0x${'34'.repeat(32)}`, timestamp: '0x6740a0c0', baseFeePerGas: '0x3b9aca00', gasLimit: '0x1c9c380', gasUsed: '0x0', transactions: [] }
    const answers: Record<string, unknown> = {
      eth_chainId: '0x2105',
      eth_simulateV1: [{ calls: [{ status: '0x1', gasUsed: '0x5208', returnData: '0x', logs: [] }] }],
      eth_getBlockByNumber: block,
      eth_maxPriorityFeePerGas: '0x1',
      eth_getCode: '0x',
      eth_getTransactionCount: '0x0',
      eth_estimateGas: '0x5208',
      eth_sendRawTransaction: TX_HASH,
    }
    node = await startJsonRpcNode((call) => (call.method in answers ? { result: answers[call.method] } : { error: { code: -32601, message: `${call.method} is not served here` } }))
  })
  afterAll(() => node.close())

  it('signs the lower-case intent with the lower-case token, and the lookup by id finds it in either case', async () => {
    const signed: SignParams[] = []
    const checkParams = checkedBy(signParamsSchema)
    gw = await makeTestGateway({
      rpcUrls: { 8453: node.url },
      policy: { requireApprovalAbove: { valueWei: '1' } },
      signer: async (method, params) => {
        if (method === signerMethods.accounts) return [{ address: WALLET, label: null, dev: false, unlocked: true, backend: 'keystore' }]
        if (method !== signerMethods.sign) throw new Error(`unexpected signer call ${method}`)
        checkParams(params)
        const p = params as SignParams
        // The signer's own rule: the token it minted, bound to this intent.
        if (p.approvalTokenId !== TOKEN) throw new Error(`unknown token ${p.approvalTokenId}`)
        signed.push(p)
        return { intentId: p.intent.id, txHash: TX_HASH, signedTx: '0x02f8aa', signerAddress: WALLET, nonce: p.nonce, repeated: false }
      },
    })
    const intent = makeIntent({ action: actions.native(), nowMs: gw.clock(), maxGasWei: '1000000000000000' })
    const res = await post(gw, '/v1/tx/sign-and-send', { intent: upper(intent), approvalTokenId: TOKEN.toUpperCase() })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json()).toEqual({ intentId: intent.id, signedTx: '0x02f8aa', txHash: TX_HASH, broadcast: true, broadcastError: null })
    expect(signed.map((p) => [p.intent.id, p.approvalTokenId, p.approvalRequired])).toEqual([[intent.id, TOKEN, true]])
    expect(intentHash(signed[0]!.intent)).toBe(intentHash(normalizeIntent(intent)))
    for (const id of [intent.id, intent.id.toUpperCase()]) {
      const found = await gw.app.inject({ method: 'GET', url: `/v1/intents/${id}/tx` })
      expect(found.statusCode, id).toBe(200)
      expect(found.json()).toMatchObject({ intentId: intent.id, txHash: TX_HASH })
    }
  })
})
