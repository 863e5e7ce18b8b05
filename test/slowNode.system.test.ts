// A chain node that takes its time: the gateway still answers, and says in
// its log which node was slow, without the RPC URL's path (where providers
// put API keys).
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { NATIVE_TOKEN_ADDRESS } from '@countersign/shared'
import { freePort, spawnService, tempDataDir, type ServiceProcess } from './support/processes.js'
import { entries } from './support/stack.js'

const SLOW_MS = 2300 // above the gateway's 2000 ms threshold, below viem's 10 s timeout
const WALLET = '0x000000000000000000000000000000000000bEEF'

let node: http.Server
let gateway: ServiceProcess
let base: string
let nodeHost: string

/** eth_chainId at once (the start-up check), eth_getBalance after SLOW_MS; one call per request or a batch. */
function fakeNode(): http.Server {
  const answer = (call: { id: number; method: string }) => ({ jsonrpc: '2.0', id: call.id, result: call.method === 'eth_chainId' ? '0x2105' : '0xde0b6b3a7640000' })
  return http.createServer((req, res) => {
    let body = ''
    req.on('data', (d) => (body += d))
    req.on('end', () => {
      const parsed = JSON.parse(body) as { id: number; method: string } | Array<{ id: number; method: string }>
      const calls = Array.isArray(parsed) ? parsed : [parsed]
      const reply = () => {
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify(Array.isArray(parsed) ? calls.map(answer) : answer(calls[0]!)))
      }
      if (calls.some((c) => c.method === 'eth_getBalance')) setTimeout(reply, SLOW_MS)
      else reply()
    })
  })
}

beforeAll(async () => {
  node = fakeNode()
  await new Promise<void>((r) => node.listen(0, '127.0.0.1', r))
  nodeHost = `127.0.0.1:${(node.address() as AddressInfo).port}`
  const port = await freePort()
  base = `http://127.0.0.1:${port}`
  gateway = spawnService('gateway-slow-node', entries.gateway, {
    SERVICE_DATA_DIR: tempDataDir(),
    SERVICE_PORT: String(port),
    SERVICE_RPC_URL_8453: `http://${nodeHost}/v3/SECRET-API-KEY`,
  })
  await gateway.waitForLine(/Server listening|listening/i, 30_000)
}, 40_000)

afterAll(async () => {
  await gateway?.stop()
  await new Promise((r) => node?.close(r))
})

describe('a slow chain node', () => {
  it('the answer still comes, and the gateway logs the node host, the time and the outcome, never the URL path', async () => {
    const from = gateway.lines.length
    const r = await fetch(`${base}/v1/balance/${NATIVE_TOKEN_ADDRESS}/${WALLET}`)
    expect(r.status).toBe(200)
    expect(((await r.json()) as { balance: string }).balance).toBe('1000000000000000000')
    const line = await gateway.waitForLine(/slow or got no answer/, 5000, { from })
    const logged = JSON.parse(line) as { level: number; rpc: { host: string; ms: number; calls: number; outcome: string } }
    expect(logged.level).toBe(40)
    expect(logged.rpc).toMatchObject({ host: nodeHost, calls: 1, outcome: 'answered' })
    expect(logged.rpc.ms).toBeGreaterThanOrEqual(SLOW_MS - 100)
    expect(gateway.output()).not.toContain('SECRET-API-KEY')
  })
})
