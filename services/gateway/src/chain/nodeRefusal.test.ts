// What a node answered to eth_estimateGas and eth_call, through viem's real
// client and transport, read as a refusal of the transaction or a failure of
// the node.
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPublicClient, http as httpTransport } from 'viem'
import { startJsonRpcNode, type JsonRpcNode, type NodeAnswer } from './jsonRpcNode.testkit.js'
import { isNodeRefusal } from './nodeRefusal.js'

let reply: NodeAnswer = { result: null }
let node: JsonRpcNode
let url: string

beforeAll(async () => {
  node = await startJsonRpcNode(() => reply)
  url = node.url
})
afterAll(() => node.close())

const tx = { account: '0x1111111111111111111111111111111111111111', to: '0x2222222222222222222222222222222222222222', data: '0x', value: 1n } as const

async function errorOf(run: (client: ReturnType<typeof createPublicClient>) => Promise<unknown>, to = url): Promise<unknown> {
  const client = createPublicClient({ transport: httpTransport(to, { retryCount: 0, timeout: 2_000 }) })
  try {
    await run(client)
  } catch (err) {
    return err
  }
  throw new Error('the call succeeded')
}

describe('isNodeRefusal', () => {
  const refusals: Array<[string, { code: number; message: string; data?: string }]> = [
    ['a revert with its reason (code 3)', { code: 3, message: 'execution reverted: not enough', data: '0x08c379a0' }],
    ['a revert as geth words it without a code of its own', { code: -32000, message: 'execution reverted' }],
    ['gas required exceeds allowance', { code: -32000, message: 'gas required exceeds allowance (30000000)' }],
    ['a wallet that cannot pay', { code: -32000, message: 'insufficient funds for gas * price + value' }],
    ['transaction rejected (-32003)', { code: -32003, message: 'transaction rejected' }],
    ['a validation code of eth_simulateV1', { code: -38014, message: 'insufficient funds' }],
    // Halts other than a revert, as geth and anvil word them (found by review: read as node failures, 502).
    ['an invalid opcode (geth)', { code: -32000, message: 'invalid opcode: INVALID' }],
    ['an invalid jump (geth)', { code: -32000, message: 'invalid jump destination' }],
    ['a stack underflow (geth)', { code: -32000, message: 'stack underflow (0 <=> 2)' }],
    ['out of gas (geth)', { code: -32000, message: 'out of gas' }],
    ['a state change in a static call (geth)', { code: -32000, message: 'write protection' }],
    ["an invalid opcode (anvil's -32603)", { code: -32603, message: 'EVM error InvalidFEOpcode' }],
  ]
  for (const [what, error] of refusals) {
    it(`reads ${what} as a refusal, from eth_estimateGas and eth_call`, async () => {
      reply = { error }
      expect(isNodeRefusal(await errorOf((c) => c.estimateGas(tx)))).toBe(true)
      expect(isNodeRefusal(await errorOf((c) => c.call(tx)))).toBe(true)
    })
  }

  const failures: Array<[string, NodeAnswer]> = [
    ['an internal error (-32603)', { error: { code: -32603, message: 'internal error' } }],
    ["the node's own limit (-32005)", { error: { code: -32005, message: 'limit exceeded' } }],
    ['a -32000 that names no refusal', { error: { code: -32000, message: 'header not found' } }],
    ['an HTTP 503', { status: 503 }],
    ['an HTTP 429', { status: 429 }],
  ]
  for (const [what, answer] of failures) {
    it(`reads ${what} as a failure of the node`, async () => {
      reply = answer
      expect(isNodeRefusal(await errorOf((c) => c.estimateGas(tx)))).toBe(false)
      expect(isNodeRefusal(await errorOf((c) => c.call(tx)))).toBe(false)
    })
  }

  it('reads a refused connection and a plain error as failures', async () => {
    const closed = http.createServer()
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r))
    const port = (closed.address() as AddressInfo).port
    await new Promise<void>((r) => closed.close(() => r()))
    expect(isNodeRefusal(await errorOf((c) => c.estimateGas(tx), `http://127.0.0.1:${port}`))).toBe(false)
    expect(isNodeRefusal(new Error('execution reverted'))).toBe(false)
    expect(isNodeRefusal(undefined)).toBe(false)
  })
})
