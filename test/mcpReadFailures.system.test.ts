// Read tools whose read fails at the node. Found by review:
// countersign_intent_status (what the model is told to use after OUTCOME
// UNKNOWN) found the intent's transaction, then the receipt lookup failed
// (502 rpc_error) and the tool said "Nothing was signed or sent; it is safe
// to try again later" about a mined payment; countersign_tx_status said the
// same. A failed read says nothing about what was sent, and a found
// transaction was sent whatever its receipt. The real server over stdio, the
// three processes on anvil behind a JSON-RPC proxy that fails the calls a
// test names (what a rate-limited public node does).
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anvilAccounts, startAnvil, type Anvil } from './support/anvil.js'
import { startRpcProxy, type RpcProxy } from './support/rpcProxy.js'
import { importKey, Stack } from './support/stack.js'
import { callTool, connectMcp } from './support/mcp.js'

const WALLET = anvilAccounts[0].address
const TO = '0x000000000000000000000000000000000000d00d'
let anvil: Anvil, proxy: RpcProxy, stack: Stack, mcp: Client

beforeAll(async () => {
  anvil = await startAnvil({ chainId: 8453 })
  proxy = await startRpcProxy(anvil.rpcUrl)
  stack = new Stack({ rpcUrls: { 8453: proxy.url }, policy: { maxTxPerHour: 100, requireApprovalAbove: { valueWei: '1000000000000000000' } } })
  await importKey(stack.dataDir, anvilAccounts[0].privateKey)
  await stack.start({ approver: true })
  ;({ mcp } = await connectMcp('countersign-read-failures-test', { url: stack.url, wallet: WALLET }))
}, 120_000)

afterAll(async () => {
  await mcp?.close()
  await stack?.stop()
  proxy?.server.close()
  await anvil?.stop()
})

const call = (name: string, args: Record<string, unknown>) => callTool(mcp, name, args)

/** The node refuses `method` as a busy public RPC does. */
const rateLimit = (method: string) => proxy.answer((c) => (c.method === method ? { jsonrpc: '2.0', id: c.id, error: { code: -32005, message: 'rate limit exceeded' } } : undefined))

describe('a read the node fails says nothing about what was sent', () => {
  it('countersign_intent_status of a mined payment whose receipt the node will not give: signed and sent, do not send again', async () => {
    proxy.answer(undefined)
    const sent = await call('countersign_transfer_native', { to: TO, amount: '12345' })
    expect(sent.isError, sent.text).toBeFalsy()
    const { intentId, txHash } = sent.structured

    rateLimit('eth_getTransactionReceipt')
    const status = await call('countersign_intent_status', { intentId })
    expect(status.text).not.toMatch(/Nothing was signed|safe to try again/)
    expect(status.isError, status.text).toBeFalsy()
    expect(status.text).toBe(
      `Intent ${intentId}: transaction ${txHash} was signed and sent; its receipt could not be read now (rpc_error, HTTP 502), so whether it is mined is not known. Do not send this payment again: check it later with countersign_tx_status or countersign_intent_status.`,
    )
    expect(status.structured).toEqual({ intentId, found: true, txHash, broadcast: true, receiptError: 'rpc_error' })

    const tx = await call('countersign_tx_status', { txHash })
    expect(tx.text).not.toMatch(/Nothing was signed|safe to try again/)
    expect(tx.isError).toBe(true)
    expect(tx.text.split('\n')[0]).toBe(
      `countersign could not read the status of transaction ${txHash} now (rpc_error, HTTP 502). It may be mined or pending. A failed read says nothing about whether anything was signed or sent; do not send a payment again because of it. Check again later.`,
    )
    expect(tx.structured).toMatchObject({ error: 'rpc_error', status: 502, outcome: 'read_failed' })

    // The node answers again: the same tools tell the whole story.
    proxy.answer(undefined)
    expect((await call('countersign_intent_status', { intentId })).structured).toMatchObject({ intentId, found: true, txHash, state: 'mined', status: 'success' })

    // The same id in upper case is refused by the tool, not answered "nothing was signed" (ids are compared as written).
    const upper = await mcp.callTool({ name: 'countersign_intent_status', arguments: { intentId: intentId.toUpperCase() } }).then(
      (r) => ({ isError: r.isError === true, text: JSON.stringify(r.content) }),
      (err: Error) => ({ isError: true, text: err.message }),
    )
    expect(upper.isError).toBe(true)
    expect(upper.text).toMatch(/a UUID in lower case/)
    expect(upper.text).not.toMatch(/Nothing was signed|safe to try again/)
  }, 60_000)

  it('countersign_balance the node will not read: a read failure, not "nothing was signed"', async () => {
    rateLimit('eth_getBalance')
    const balance = await call('countersign_balance', {})
    expect(balance.isError).toBe(true)
    expect(balance.text).not.toMatch(/Nothing was signed|safe to try again/)
    expect(balance.text.split('\n')[0]).toMatch(/^countersign could not read the balance now \(rpc_error, HTTP 502\)\. A failed read says nothing about whether anything was signed or sent/)
    expect(balance.structured).toMatchObject({ outcome: 'read_failed' })
    proxy.answer(undefined)
  }, 60_000)
})
