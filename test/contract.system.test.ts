// The API contract on the real three processes and a real anvil chain: every
// response below, success and error, is checked against the OpenAPI document
// the gateway serves (generated from the route schemas fastify validates and
// serialises with). A field a response schema does not list never reaches a
// client, so the document and the answers must agree in both directions.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseEther, type Address } from 'viem'
import { NATIVE_TOKEN_ADDRESS, type ChainId, type TxIntent } from '@countersign/shared'
import { anvilAccounts, startAnvil, type Anvil } from './support/anvil.js'
import { responseChecker } from './support/contract.js'
import { intentFor } from './support/intents.js'
import { waitFor } from './support/processes.js'
import { importKey, Stack } from './support/stack.js'

const owner = anvilAccounts[0]
const WALLET = owner.address as Address
const BOB = '0x000000000000000000000000000000000000bEEF' as Address

let anvil: Anvil
let stack: Stack
let contract: ReturnType<typeof responseChecker>

const send = (wei: bigint, chainId: ChainId = 8453): TxIntent => intentFor(WALLET, { type: 'transfer_native', to: BOB, amount: wei.toString() }, { chainId, maxGasWei: parseEther('0.01').toString() })

/** A request to the running gateway, its answer checked against the document. */
async function call(method: 'get' | 'post' | 'delete', path: string, template: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(stack.url + path, {
    method: method.toUpperCase(),
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const contentType = res.headers.get('content-type')
  const text = await res.text()
  const parsed = contentType?.startsWith('application/json') ? (JSON.parse(text) as unknown) : text
  contract.check(method, template, { status: res.status, body: parsed, contentType })
  return { status: res.status, body: parsed as any }
}

beforeAll(async () => {
  anvil = await startAnvil({ chainId: 8453 })
  stack = new Stack({ rpcUrls: { 8453: anvil.rpcUrl }, policy: { maxTxPerHour: 1000, maxValueWei: parseEther('5').toString(), requireApprovalAbove: { valueWei: parseEther('1').toString() } } })
  await importKey(stack.dataDir, owner.privateKey)
  await stack.start({ approver: true })
  const served = await fetch(`${stack.url}/v1/openapi.json`).then((r) => r.json())
  contract = responseChecker(served as Parameters<typeof responseChecker>[0])
})

afterAll(async () => {
  await stack?.stop()
  await anvil?.stop()
})

describe('real responses match the OpenAPI document', () => {
  it('the pipeline: build, preflight, approve-request with an operator decision, sign-and-send, receipt, balance', async () => {
    expect((await call('get', '/v1/health', '/v1/health')).body).toMatchObject({ status: 'ok' })
    const big = send(parseEther('2'))
    const built = await call('post', '/v1/tx/build', '/v1/tx/build', big)
    expect(built.status).toBe(200)
    expect(built.body.txRequest).toMatchObject({ to: BOB, chainId: 8453, type: 'eip1559' })
    const preflight = await call('post', '/v1/tx/preflight', '/v1/tx/preflight', big)
    expect(preflight.status).toBe(200)
    // Everything the preflight report holds is still there after serialisation.
    expect(Object.keys(preflight.body).sort()).toEqual(
      ['allowanceChanges', 'balanceDiffs', 'gasCost', 'gasEstimate', 'intentId', 'revertReason', 'riskFactors', 'riskReasons', 'riskScore', 'signals', 'simulationMethod', 'simulationSuccess', 'tokenFacts', 'warnings'].sort(),
    )

    // approve-request blocks until the operator decides on the pending request.
    const approval = call('post', '/v1/tx/approve-request', '/v1/tx/approve-request', big)
    let pending: any[] = []
    await waitFor(async () => {
      pending = (await call('get', '/v1/approvals/pending', '/v1/approvals/pending')).body.pending
      return pending.some((p) => p.summary.intentId === big.id)
    }, { timeoutMs: 20_000, what: 'the pending request' })
    const request = pending.find((p) => p.summary.intentId === big.id)
    expect(request).toMatchObject({ requestId: expect.any(String), ttlSeconds: expect.any(Number), summary: { action: expect.any(String), riskScore: expect.any(Number), warnings: expect.any(Array) }, card: { title: expect.any(String) } })
    expect((await call('post', `/v1/approvals/${request.requestId}/decide`, '/v1/approvals/{requestId}/decide', { approved: true })).status).toBe(401)
    const decided = await call('post', `/v1/approvals/${request.requestId}/decide`, '/v1/approvals/{requestId}/decide', { approved: true }, { authorization: `Bearer ${stack.operatorToken}` })
    expect(decided).toMatchObject({ status: 200, body: { decided: true, requestId: request.requestId, approved: true } })
    const approved = await approval
    expect(approved).toMatchObject({ status: 200, body: { approved: true, approvalRequired: true, approvalTokenId: expect.any(String), policyDecision: { decision: 'require_approval', policyVersion: '1' } } })

    const sent = await call('post', '/v1/tx/sign-and-send', '/v1/tx/sign-and-send', { intent: big, approvalTokenId: approved.body.approvalTokenId })
    expect(sent).toMatchObject({ status: 200, body: { broadcast: true, broadcastError: null } })
    let receipt: { status: number; body: any } = { status: 0, body: null }
    await waitFor(async () => {
      receipt = await call('get', `/v1/tx/${sent.body.txHash}`, '/v1/tx/{hash}')
      return receipt.status === 200
    }, { timeoutMs: 20_000, what: 'the receipt' })
    expect(receipt.body).toMatchObject({ txHash: sent.body.txHash, status: 'success', transactionHash: sent.body.txHash, contractAddress: null })
    const balance = await call('get', `/v1/balance/${NATIVE_TOKEN_ADDRESS}/${BOB}`, '/v1/balance/{token}/{account}')
    expect(balance.body).toEqual({ token: NATIVE_TOKEN_ADDRESS, account: BOB, balance: parseEther('2').toString(), chainId: 8453 })

    // A second use of the token: 403 invalid_approval_token (a replay of the same intent re-broadcasts instead, so a new intent).
    const other = send(parseEther('2'))
    const refused = await call('post', '/v1/tx/sign-and-send', '/v1/tx/sign-and-send', { intent: other, approvalTokenId: approved.body.approvalTokenId })
    expect(refused).toMatchObject({ status: 403, body: { error: 'invalid_approval_token' } })
    const missing = await call('post', '/v1/tx/sign-and-send', '/v1/tx/sign-and-send', { intent: other })
    expect(missing).toMatchObject({ status: 403, body: { error: 'approval_required', txRequestHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) } })

    const events = (await call('get', '/v1/approvals/history?limit=100', '/v1/approvals/history')).body.events as Array<{ event: string; intentId: string }>
    expect(events.filter((e) => e.intentId === big.id).map((e) => e.event)).toEqual(expect.arrayContaining(['tx_built', 'preflight_completed', 'approve_request_created', 'approval_granted', 'tx_broadcast']))
  })

  it('the error bodies: validation, policy_denied (build, approve-request, sign-and-send), not found, operator-only, WebSocket', async () => {
    const bad = await call('post', '/v1/tx/build', '/v1/tx/build', { ...send(1n), extra: 1 })
    expect(bad.body).toEqual({ statusCode: 400, error: 'Bad Request', message: expect.any(String) })
    const denied = send(parseEther('6'))
    for (const [path, body] of [['/v1/tx/build', denied], ['/v1/tx/approve-request', denied], ['/v1/tx/sign-and-send', { intent: denied }]] as const) {
      const r = await call('post', path, path, body)
      expect(r, path).toEqual({ status: 403, body: { error: 'policy_denied', decision: 'deny', reasons: [expect.stringContaining('exceeds')], policyVersion: '1' } })
    }
    expect((await call('post', '/v1/tx/preflight', '/v1/tx/preflight', { intent: 1 })).status).toBe(400)
    expect((await call('get', `/v1/tx/0x${'ab'.repeat(32)}`, '/v1/tx/{hash}')).body).toEqual({ error: 'not_found', message: expect.any(String) })
    expect((await call('get', '/v1/tx/0x12', '/v1/tx/{hash}')).status).toBe(400)
    expect((await call('get', `/v1/balance/0x12/${BOB}`, '/v1/balance/{token}/{account}')).status).toBe(400)
    expect((await call('post', `/v1/approvals/${randomUUID()}/decide`, '/v1/approvals/{requestId}/decide', { approved: true }, { authorization: `Bearer ${stack.operatorToken}` })).status).toBe(404)
    expect((await call('post', `/v1/approvals/${randomUUID()}/decide`, '/v1/approvals/{requestId}/decide', { approved: 'yes' })).status).toBe(400)
    expect((await call('get', '/v1/skills', '/v1/skills')).body).toEqual([])
    expect((await call('get', '/v1/skills/nothing', '/v1/skills/{name}')).body).toEqual({ error: 'skill_not_found', name: 'nothing' })
    expect((await call('delete', '/v1/skills/nothing', '/v1/skills/{name}')).status).toBe(401)
    expect((await call('delete', '/v1/skills/nothing', '/v1/skills/{name}', undefined, { authorization: `Bearer ${stack.operatorToken}` })).status).toBe(404)
    const register = await call('post', '/v1/skills/register', '/v1/skills/register', { name: 'x' })
    expect(register.body).toMatchObject({ registered: false, name: 'x', manifestHash: '', error: 'schema_validation_failed', validationErrors: expect.any(Array) })
    expect((await call('get', '/v1/approvals/webhooks', '/v1/approvals/webhooks')).body).toEqual({ configured: false, deliveries: [] })
    expect((await call('get', '/v1/approvals/ws', '/v1/approvals/ws')).status).toBe(426)
    expect((await call('get', '/approval-ui', '/approval-ui')).body).toContain('<html')
    expect((await call('get', '/v1/openapi.json', '/v1/openapi.json')).status).toBe(200)
  })

  it('checked a success answer of every SPEC endpoint; the check itself refuses an extra field and an undocumented status', () => {
    expect(() => contract.check('get', '/v1/health', { status: 200, body: { status: 'ok', version: '0.1.0', uptime: 1, extra: true } })).toThrow(/does not match the document/)
    expect(() => contract.check('get', '/v1/health', { status: 500, body: {} })).toThrow(/does not list/)
    for (const op of [
      'get /v1/health 200',
      'post /v1/tx/build 200',
      'post /v1/tx/preflight 200',
      'post /v1/tx/approve-request 200',
      'post /v1/tx/sign-and-send 200',
      'get /v1/tx/{hash} 200',
      'get /v1/balance/{token}/{account} 200',
      'get /v1/approvals/pending 200',
      'post /v1/approvals/{requestId}/decide 200',
      'get /v1/approvals/history 200',
      'get /approval-ui 200',
      'get /v1/skills 200',
    ]) {
      expect(contract.checked, op).toContain(op)
    }
  })
})
