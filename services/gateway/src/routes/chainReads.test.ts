import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { HttpError } from '@countersign/shared/http/errors'
import { makeTestGateway } from '../app.testkit.js'
import { defaultBalanceChain } from './chainReads.js'

type Gw = Awaited<ReturnType<typeof makeTestGateway>>
let gw: Gw
afterEach(async () => {
  await gw?.close()
})

const TOKEN = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913'
const ACCOUNT = '0x2222222222222222222222222222222222222222'

// Without a chain RPC; the answers against a real chain are in test/signer.system.test.ts.
describe('chain reads, before any RPC is used', () => {
  it('a balance with a mixed-case address of wrong checksum is a 400 naming the parameter, not an RPC failure', async () => {
    gw = await makeTestGateway()
    for (const [url, name] of [
      [`/v1/balance/${TOKEN.replace('fCD6', 'fcD6')}/${ACCOUNT}`, 'params/token'],
      [`/v1/balance/${TOKEN}/0x2222222222222222222222222222222222222aBc`, 'params/account'],
    ] as const) {
      const res = await gw.app.inject({ method: 'GET', url })
      expect(res.statusCode, url).toBe(400)
      expect(Object.keys(res.json()).sort()).toEqual(['error', 'message', 'statusCode'])
      expect(res.json().message).toMatch(new RegExp(`^${name} 0x[0-9a-fA-F]{40} is mixed case but fails its EIP-55 checksum`))
    }
  })

  it('a balance with good addresses and no RPC configured is a 502 no_rpc_client', async () => {
    gw = await makeTestGateway()
    for (const url of [`/v1/balance/${TOKEN}/${ACCOUNT}`, `/v1/balance/${TOKEN.toLowerCase()}/${ACCOUNT}?chainId=8453`]) {
      const res = await gw.app.inject({ method: 'GET', url })
      expect(res.statusCode, url).toBe(502)
      expect(res.json().error).toBe('no_rpc_client')
    }
  })
})

describe('the chain of a balance request without ?chainId', () => {
  it.each([
    [[8453], 8453],
    [[1, 8453], 8453],
    [[8453, 10, 42161], 8453],
    [[10], 10],
    [[42161], 42161],
  ])('configured %j -> %d', (configured, chainId) => {
    expect(defaultBalanceChain(configured)).toBe(chainId)
  })

  it('several chains without 8453: a 400 naming the choices', () => {
    expect(() => defaultBalanceChain([1, 10])).toThrow(HttpError)
    try {
      defaultBalanceChain([1, 10])
    } catch (err) {
      expect((err as HttpError).statusCode).toBe(400)
      expect((err as HttpError).body).toEqual({ statusCode: 400, error: 'Bad Request', message: 'querystring/chainId is required: 8453 is not configured and several chains are; one of 1, 10' })
    }
  })

  it('no chain at all: 502 no_rpc_client', () => {
    expect(() => defaultBalanceChain([])).toThrow(expect.objectContaining({ statusCode: 502, body: expect.objectContaining({ error: 'no_rpc_client' }) }))
  })
})

describe('GET /v1/tx/:hash against a node whose receipt lacks fields', () => {
  const hash = `0x${'ab'.repeat(32)}`
  const full = {
    transactionHash: hash,
    transactionIndex: '0x0',
    blockHash: `0x${'cd'.repeat(32)}`,
    blockNumber: '0x10',
    from: ACCOUNT.toLowerCase(),
    to: TOKEN.toLowerCase(),
    cumulativeGasUsed: '0x5208',
    gasUsed: '0x5208',
    effectiveGasPrice: '0x3b9aca00',
    contractAddress: null,
    logs: [],
    logsBloom: `0x${'00'.repeat(256)}`,
    status: '0x1',
    type: '0x2',
  }

  /** A JSON-RPC node (a real HTTP server) that answers every receipt with `receipt`. */
  async function nodeAnswering(receipt: Record<string, unknown>) {
    const server = http.createServer((req, res) => {
      let body = ''
      req.on('data', (d) => (body += d))
      req.on('end', () => {
        const call = JSON.parse(body) as { id: number; method: string }
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ jsonrpc: '2.0', id: call.id, result: call.method === 'eth_getTransactionReceipt' ? receipt : null }))
      })
    })
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
  }

  it.each(['effectiveGasPrice', 'gasUsed', 'from', 'blockHash'])('without %s: 502 rpc_error naming it, not a 500', async (field) => {
    const { [field]: _dropped, ...partial } = full as Record<string, unknown>
    const node = await nodeAnswering(partial)
    try {
      gw = await makeTestGateway({ rpcUrls: { 8453: node.url } })
      const res = await gw.app.inject({ method: 'GET', url: `/v1/tx/${hash}?chainId=8453` })
      expect(res.statusCode).toBe(502)
      expect(res.json()).toEqual({ error: 'rpc_error', message: `chain 8453: the node's receipt for ${hash} lacks ${field}` })
    } finally {
      node.server.closeAllConnections()
      await new Promise((r) => node.server.close(r))
    }
  })

  it('with every field: the receipt', async () => {
    const node = await nodeAnswering(full)
    try {
      gw = await makeTestGateway({ rpcUrls: { 8453: node.url } })
      const res = await gw.app.inject({ method: 'GET', url: `/v1/tx/${hash}?chainId=8453` })
      expect(res.statusCode).toBe(200)
      expect(res.json()).toMatchObject({ txHash: hash, status: 'success', gasUsed: '21000', effectiveGasPrice: '1000000000', chainId: 8453 })
    } finally {
      node.server.closeAllConnections()
      await new Promise((r) => node.server.close(r))
    }
  })
})
