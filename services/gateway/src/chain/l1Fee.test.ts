// Which chains are asked for an L1 data fee, and how often a node is asked
// whether it has the GasPriceOracle, against a local JSON-RPC node through
// the gateway's own chain clients.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createChainClients } from './chainClients.js'
import { startJsonRpcNode, type JsonRpcNode } from './jsonRpcNode.testkit.js'
import { createL1FeeReader, GAS_PRICE_ORACLE } from './l1Fee.js'

let oracleCode = '0x'
let codeFails = false
let node: JsonRpcNode
let url: string
const calls = () => node.methods

beforeAll(async () => {
  node = await startJsonRpcNode((call) => {
    if (call.method === 'eth_getCode') {
      if (codeFails) return { error: { code: -32603, message: 'internal error' } }
      return { result: String(call.params[0]).toLowerCase() === GAS_PRICE_ORACLE.toLowerCase() ? oracleCode : '0x' }
    }
    if (call.method === 'eth_call') return { result: `0x${(1234n).toString(16).padStart(64, '0')}` }
    return { error: { code: -32601, message: 'not served' } }
  })
  url = node.url
})
afterAll(() => node.close())
beforeEach(() => {
  node.methods.length = 0
  oracleCode = '0x'
  codeFails = false
})

const tx = { to: '0x2222222222222222222222222222222222222222', data: '0x', value: '1' } as const

describe('createL1FeeReader', () => {
  it('asks nothing on chains without an L1 data fee (1, 42161)', async () => {
    const chains = createChainClients({ 1: url, 42161: url })
    const read = createL1FeeReader()
    expect(await read(chains.get(1), tx)).toBe(0n)
    expect(await read(chains.get(42161), tx)).toBe(0n)
    expect(calls()).toEqual([])
  })

  it("reads the oracle's fee on Base and Optimism, asking once whether it is there", async () => {
    oracleCode = '0x6000'
    const chains = createChainClients({ 10: url, 8453: url })
    const read = createL1FeeReader()
    expect(await read(chains.get(8453), tx)).toBe(1234n)
    expect(await read(chains.get(8453), tx)).toBe(1234n)
    expect(await read(chains.get(10), tx)).toBe(1234n)
    expect(calls().filter((m) => m === 'eth_getCode')).toHaveLength(2)
    expect(calls().filter((m) => m === 'eth_call')).toHaveLength(3)
  })

  it('counts no fee on a node of chain 8453 without the oracle (a local chain), says so once, and asks again each time: one empty answer does not switch the fee off (found by review)', async () => {
    const chains = createChainClients({ 8453: url })
    const told: number[] = []
    const read = createL1FeeReader({ noOracle: (id) => told.push(id) })
    expect(await read(chains.get(8453), tx)).toBe(0n)
    expect(await read(chains.get(8453), tx)).toBe(0n)
    expect(told).toEqual([8453])
    expect(calls()).toEqual(['eth_getCode', 'eth_getCode'])
    oracleCode = '0x6000'
    expect(await read(chains.get(8453), tx)).toBe(1234n)
  })

  it('keeps the oracle once seen, until forget (the endpoint found answering another chain)', async () => {
    oracleCode = '0x6000'
    const chains = createChainClients({ 8453: url })
    const read = createL1FeeReader()
    expect(await read(chains.get(8453), tx)).toBe(1234n)
    oracleCode = '0x'
    expect(await read(chains.get(8453), tx)).toBe(1234n)
    read.forget(8453)
    expect(await read(chains.get(8453), tx)).toBe(0n)
  })

  it('throws while the node cannot say whether the oracle is there, and asks again next time', async () => {
    const chains = createChainClients({ 8453: url })
    const read = createL1FeeReader()
    codeFails = true
    await expect(read(chains.get(8453), tx)).rejects.toThrow(/internal error/)
    codeFails = false
    oracleCode = '0x6000'
    expect(await read(chains.get(8453), tx)).toBe(1234n)
  })
})
