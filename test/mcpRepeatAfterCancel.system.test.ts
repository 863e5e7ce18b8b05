// An MCP host that stops waiting for a sending tool call (its request timeout:
// the SDK's default is 60 s, not reset by progress) while sign-and-send is in
// the gateway. The SDK then drops the call's result, so the model sees only
// "Request timed out", never OUTCOME UNKNOWN or the intent id, and calls the
// same tool again. Found by review: that second call was a new intent and the
// recipient was paid twice. countersign-mcp (the real server over stdio, the
// real three processes on anvil) sends an identical call as the first call's
// intent, which the gateway never signs twice; a second equal payment takes
// newTransaction: true. A proxy in front of the gateway forwards every request
// at once and holds the sign-and-send answers it is told to hold.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseEther, type Address } from 'viem'
import { anvilAccounts, rpc, startAnvil, type Anvil } from './support/anvil.js'
import { waitFor } from './support/processes.js'
import { importKey, Stack } from './support/stack.js'
import { startHoldingProxy, type Forwarded, type HoldingProxy } from './support/holdingProxy.js'
import { callTool, connectMcp } from './support/mcp.js'

const owner = anvilAccounts[0]
const WALLET = owner.address as Address
/** The host's timeout for one tool call in this test (60 s in the SDK; shortened here). */
const HOST_TIMEOUT_MS = 3_000
/** How long the proxy holds a held sign-and-send answer: past the host's timeout. */
const HOLD_MS = 6_000

let anvil: Anvil
let stack: Stack
let proxy: HoldingProxy
let mcp: Client

/** The intent a request carries: approve-request's body is the intent, sign-and-send's holds it. */
const intentIdOf = (r: Forwarded): string | undefined => r.body?.intent?.id ?? r.body?.id

const call = (name: string, args: Record<string, unknown>) => callTool(mcp, name, args, 120_000)
/** A tool call whose host stops waiting after HOST_TIMEOUT_MS: the error the host got, or the answer if it came in time. */
const callGivingUp = (name: string, args: Record<string, unknown>) =>
  callTool(mcp, name, args, HOST_TIMEOUT_MS).then(
    (answer) => answer,
    (err: Error) => ({ hostError: err.message }),
  )

const nativeBalance = async (a: Address) => BigInt(await rpc<string>(anvil.rpcUrl, 'eth_getBalance', [a, 'latest']))
const nonce = async () => Number(BigInt(await rpc<string>(anvil.rpcUrl, 'eth_getTransactionCount', [WALLET, 'latest'])))
const sentFor = (intentId: string) => proxy.signAndSends().filter((r) => intentIdOf(r) === intentId).length

beforeAll(async () => {
  anvil = await startAnvil({ chainId: 8453 })
  // Native transfers up to 1 ETH need no operator; above, one must approve.
  stack = new Stack({ rpcUrls: { 8453: anvil.rpcUrl }, policy: { maxTxPerHour: 100, requireApprovalAbove: { valueWei: parseEther('1').toString() } } })
  await importKey(stack.dataDir, owner.privateKey)
  await stack.start({ approver: true })
  proxy = await startHoldingProxy(stack.url, HOLD_MS)
  ;({ mcp } = await connectMcp('countersign-repeat-test', { url: proxy.url, wallet: WALLET }))
}, 120_000)

afterAll(async () => {
  await mcp?.close()
  proxy?.close()
  await stack?.stop()
  await anvil?.stop()
})

describe('a sending call the host gave up on, then called again', () => {
  const TO = '0x00000000000000000000000000000000000c0ffe' as Address

  it('the identical call after a host timeout returns the first call\'s payment, not a second one; newTransaction: true pays again', async () => {
    proxy.forget()
    proxy.holds = (n) => n === 1
    const before = await nativeBalance(TO)
    const nonceBefore = await nonce()
    const args = { to: TO, amount: '1000000' }

    const first = await callGivingUp('countersign_transfer_native', args)
    expect(first).toEqual({ hostError: expect.stringMatching(/Request timed out/) })
    const firstIntent = intentIdOf(proxy.signAndSends()[0]!)!
    // The model retries as any model does after "Request timed out", the note worded anew.
    const second = await call('countersign_transfer_native', { ...args, note: 'retry after a timeout' })
    expect(second.isError, second.text).toBeFalsy()
    // The held first answer lands too; give it time, then count what the recipient got: one payment.
    await new Promise((r) => setTimeout(r, HOLD_MS))
    expect(await nativeBalance(TO)).toBe(before + 1_000_000n)
    expect(await nonce()).toBe(nonceBefore + 1)
    expect(second.text).toMatch(/^Done: /)
    expect(second.text).toContain(`so it was sent as that call's intent ${firstIntent}`)
    expect(second.text).toContain('newTransaction: true')
    expect(second.structured).toMatchObject({ intentId: firstIntent, status: 'success', repeated: true })
    // Signed once: the repeat found the transaction and asked no approval again.
    expect(proxy.requests.filter((r) => r.path === '/v1/tx/approve-request')).toHaveLength(1)

    // Once more, identical: still that payment.
    const third = await call('countersign_transfer_native', args)
    expect(third.structured).toMatchObject({ intentId: firstIntent, txHash: second.structured!.txHash, repeated: true })
    expect(await nativeBalance(TO)).toBe(before + 1_000_000n)

    // A second equal payment on purpose: a new intent, paid; its own repeat is that second payment.
    const deliberate = await call('countersign_transfer_native', { ...args, newTransaction: true })
    expect(deliberate.isError, deliberate.text).toBeFalsy()
    expect(deliberate.structured!.intentId).not.toBe(firstIntent)
    expect(deliberate.structured!.repeated).toBeUndefined()
    expect(await nativeBalance(TO)).toBe(before + 2_000_000n)
    const again = await call('countersign_transfer_native', args)
    expect(again.structured).toMatchObject({ intentId: deliberate.structured!.intentId, repeated: true })
    expect(await nativeBalance(TO)).toBe(before + 2_000_000n)
    expect(await nonce()).toBe(nonceBefore + 2)
    // Another amount is another request.
    const other = await call('countersign_transfer_native', { ...args, amount: '1000001' })
    expect(other.structured!.intentId).not.toBe(deliberate.structured!.intentId)
    expect(await nativeBalance(TO)).toBe(before + 3_000_001n)
  }, 90_000)

  it('a call cancelled while an operator decides: the identical call attaches to the same request, one approval, one payment', async () => {
    proxy.forget()
    proxy.holds = () => false
    const to = '0x000000000000000000000000000000000000be11' as Address
    const before = await nativeBalance(to)
    const nonceBefore = await nonce()
    const args = { to, amount: parseEther('2').toString() }

    const first = await callGivingUp('countersign_transfer_native', args)
    expect(first).toEqual({ hostError: expect.stringMatching(/Request timed out/) })
    const second = call('countersign_transfer_native', args)
    // The repeat is in once it asked approve-request after the first call did.
    await waitFor(() => proxy.requests.filter((r) => r.path === '/v1/tx/approve-request').length >= 2, { timeoutMs: 20_000, what: 'the repeat waiting for the operator' })
    await new Promise((r) => setTimeout(r, 500))
    const pending = (await stack.get('/v1/approvals/pending')).body.pending as Array<{ requestId: string }>
    // One request on the dashboard: the operator is asked once, for the one intent.
    expect(pending).toHaveLength(1)
    expect((await stack.decide(pending[0]!.requestId, true)).status).toBe(200)
    const result = await second
    expect(result.isError, result.text).toBeFalsy()
    expect(await nativeBalance(to)).toBe(before + parseEther('2'))
    expect(result.structured).toMatchObject({ status: 'success', repeated: true, approval: { required: true } })
    expect(new Set(proxy.requests.map(intentIdOf).filter(Boolean))).toEqual(new Set([result.structured!.intentId]))
    expect(sentFor(result.structured!.intentId)).toBe(1)
    expect(await nativeBalance(to)).toBe(before + parseEther('2'))
    expect(await nonce()).toBe(nonceBefore + 1)
  }, 90_000)
})
