// A sign-and-send whose answer comes after the client stopped waiting (a slow
// node behind the gateway, a slow network): the gateway signed and broadcast
// it, the caller saw only a timeout. countersign-mcp (over stdio, against the
// real three processes on anvil) must neither pay twice nor tell the model
// "refused": it asks the gateway again with the same intent and token, and
// when even that gets no clear answer, says the transaction MAY have been sent
// and how to check. A proxy in front of the gateway forwards every request at
// once and holds the sign-and-send answers it is told to hold.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseEther, type Address } from 'viem'
import { anvilAccounts, rpc, startAnvil, type Anvil } from './support/anvil.js'
import { deployTestToken, erc20Balance } from './support/contracts.js'
import { waitFor } from './support/processes.js'
import { intentFor } from './support/intents.js'
import { importKey, Stack } from './support/stack.js'
import { startHoldingProxy, type HoldingProxy } from './support/holdingProxy.js'
import { callTool, connectMcp } from './support/mcp.js'

const owner = anvilAccounts[0]
const WALLET = owner.address as Address
const CAROL = '0x000000000000000000000000000000000000ca02' as Address
const DAVE = '0x000000000000000000000000000000000000da4e' as Address
/** The MCP server's sign-and-send timeout in this test (COUNTERSIGN_SEND_TIMEOUT_MS). */
const SEND_TIMEOUT_MS = 1_500
/** How long the proxy holds a held answer: past the timeout. */
const HOLD_MS = 4_000

let anvil: Anvil
let stack: Stack
let token: Address
let proxy: HoldingProxy
let mcp: Client

const call = (name: string, args: Record<string, unknown>) => callTool(mcp, name, args, 120_000)

const nonce = async () => Number(BigInt(await rpc<string>(anvil.rpcUrl, 'eth_getTransactionCount', [WALLET, 'latest'])))
const nativeBalance = async (a: Address) => BigInt(await rpc<string>(anvil.rpcUrl, 'eth_getBalance', [a, 'latest']))

beforeAll(async () => {
  anvil = await startAnvil({ chainId: 8453 })
  token = await deployTestToken({ rpcUrl: anvil.rpcUrl, chainId: 8453, deployerKey: owner.privateKey, name: 'Test USD', symbol: 'TUSD', decimals: 6, supply: 10n ** 12n })
  stack = new Stack({ rpcUrls: { 8453: anvil.rpcUrl }, policy: { maxTxPerHour: 1000, tokenLimits: { [token]: { maxAmount: '1000000000' } } } })
  await importKey(stack.dataDir, owner.privateKey)
  await stack.start({ approver: true })
  proxy = await startHoldingProxy(stack.url, HOLD_MS)
  ;({ mcp } = await connectMcp('countersign-send-timeout-test', {
    url: proxy.url,
    wallet: WALLET,
    env: { COUNTERSIGN_SEND_TIMEOUT_MS: String(SEND_TIMEOUT_MS) },
  }))
}, 120_000)

afterAll(async () => {
  await mcp?.close()
  proxy?.close()
  await stack?.stop()
  await anvil?.stop()
})

describe('sign-and-send answered after the MCP server stopped waiting', () => {
  it('an operator-approved transfer whose first answer is late is asked again with the same intent and token: one payment, reported as done', async () => {
    proxy.forget()
    proxy.holds = (n) => n === 1
    const before = await nativeBalance(DAVE)
    const nonceBefore = await nonce()
    const sending = call('countersign_transfer_native', { to: DAVE, amount: parseEther('0.05').toString() })
    // Native transfers to a new recipient wait for an operator; approve the request as it appears.
    const requestId = await waitFor(
      async () => ((await stack.get('/v1/approvals/pending')).body.pending as Array<{ requestId: string }>)[0]?.requestId,
      { timeoutMs: 20_000, what: 'the approval request' },
    )
    expect((await stack.decide(requestId, true)).status).toBe(200)

    const result = await sending
    expect(result.isError, result.text).toBeFalsy()
    expect(result.text).toMatch(/^Done: /)
    expect(result.structured).toMatchObject({ status: 'success', approval: { required: true } })
    // The late first answer and the repeat: the same intent, the same token, the same transaction.
    expect(proxy.signAndSends().length).toBeGreaterThanOrEqual(2)
    expect(new Set(proxy.signAndSends().map((s) => s.body.intent.id))).toEqual(new Set([result.structured.intentId]))
    expect(new Set(proxy.signAndSends().map((s) => s.body.approvalTokenId))).toEqual(new Set([result.structured.approval.approvalTokenId]))
    expect(new Set(proxy.signAndSends().map((s) => s.answer.txHash))).toEqual(new Set([result.structured.txHash]))
    expect(await nativeBalance(DAVE)).toBe(before + parseEther('0.05'))
    expect(await nonce()).toBe(nonceBefore + 1)

    // The gateway's idempotence the client relies on: the same intent again, with its (consumed) token or
    // without any, answers the same transaction.
    const intent = proxy.signAndSends()[0]!.body.intent
    for (const body of [{ intent, approvalTokenId: result.structured.approval.approvalTokenId }, { intent }]) {
      expect(await stack.post('/v1/tx/sign-and-send', body)).toMatchObject({ status: 200, body: { txHash: result.structured.txHash } })
    }
    expect(await nonce()).toBe(nonceBefore + 1)
  }, 90_000)

  it('no clear answer even to the repeats: OUTCOME UNKNOWN (never "refused"), one payment on chain, found by countersign_intent_status', async () => {
    proxy.forget()
    proxy.holds = () => true
    const before = await erc20Balance(anvil.rpcUrl, 8453, token, CAROL)
    const nonceBefore = await nonce()

    const result = await call('countersign_transfer', { token, to: CAROL, amount: '2500000', decimals: 6, symbol: 'TUSD' })
    expect(result.isError).toBe(true)
    const intentId = result.structured.body.intentId as string
    const lines = result.text.split('\n')
    expect(lines[0]).toMatch(/^OUTCOME UNKNOWN: this transaction MAY HAVE BEEN SENT\. .* intent [0-9a-f-]{36} on chain 8453/)
    expect(result.text).toContain('Do NOT resend it as a new request')
    expect(result.text).toContain(`countersign_intent_status with intentId "${intentId}"`)
    expect(result.text).not.toMatch(/refused/i)
    expect(result.structured).toMatchObject({ error: 'send_outcome_unknown', outcome: 'unknown', body: { intentId, chainId: 8453, attempts: 4 } })
    // Four attempts, all of the one intent, all answered (late) with the one transaction.
    expect(proxy.signAndSends()).toHaveLength(4)
    expect(new Set(proxy.signAndSends().map((s) => s.body.intent.id))).toEqual(new Set([intentId]))
    const txHashes = new Set(proxy.signAndSends().map((s) => s.answer.txHash))
    expect(txHashes.size).toBe(1)

    // On chain: exactly one payment.
    await waitFor(async () => (await erc20Balance(anvil.rpcUrl, 8453, token, CAROL)) !== before, { timeoutMs: 20_000, what: 'the payment mined' })
    expect(await erc20Balance(anvil.rpcUrl, 8453, token, CAROL)).toBe(before + 2_500_000n)
    expect(await nonce()).toBe(nonceBefore + 1)

    // What the model is told to do finds it.
    proxy.holds = () => false
    const status = await call('countersign_intent_status', { intentId })
    expect(status.isError, status.text).toBeFalsy()
    expect(status.structured).toMatchObject({ intentId, found: true, broadcast: true, txHash: [...txHashes][0], state: 'mined', status: 'success' })
    expect(status.text).toContain('Do not send this payment again')

    // A busy service: more than a history page (100 events) of other intents after it. It is still found.
    for (let n = 0; n < 60; n++) {
      expect((await stack.post('/v1/tx/build', intentFor(WALLET, { type: 'transfer_native', to: DAVE, amount: '1' }))).status).toBe(200)
    }
    const newest = (await stack.get('/v1/approvals/history?limit=100')).body.events as Array<{ intentId: string }>
    expect(newest.some((e) => e.intentId === intentId)).toBe(false)
    const later = await call('countersign_intent_status', { intentId })
    expect(later.structured).toMatchObject({ intentId, found: true, broadcast: true, txHash: [...txHashes][0], state: 'mined' })
    const unknown = await call('countersign_intent_status', { intentId: '2b0c9a4e-6f3d-4c1a-9e8b-7d5f3a2c1b0e' })
    expect(unknown.structured).toEqual({ intentId: '2b0c9a4e-6f3d-4c1a-9e8b-7d5f3a2c1b0e', found: false })
    expect(unknown.text).toMatch(/^No transaction was signed for intent/)
  }, 90_000)
})
