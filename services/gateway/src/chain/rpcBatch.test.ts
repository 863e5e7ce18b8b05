import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { createPublicClient, http as httpTransport } from 'viem'
import { createKeepAliveFetch } from './keepAliveFetch.js'

// A real HTTP server that speaks JSON-RPC, with or without batches, and
// records each HTTP request's body: what the node saw is what is asserted.

interface Call {
  id: number | string
  method: string
}
type Answer = (call: Call, inBatch: boolean) => Record<string, unknown> | 'never'

const servers: http.Server[] = []
afterEach(async () => {
  for (const s of servers.splice(0)) s.closeAllConnections()
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))))
})

async function node(answer: Answer, opts: { batches?: 'yes' | 'refuse-400' | 'single-error' } = {}): Promise<{ url: string; requests: unknown[] }> {
  const requests: unknown[] = []
  const server = http.createServer((req, res) => {
    let body = ''
    req.on('data', (d) => (body += d))
    req.on('end', () => {
      const parsed = JSON.parse(body) as Call | Call[]
      requests.push(parsed)
      const reply = (status: number, value: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' })
        res.end(JSON.stringify(value))
      }
      if (!Array.isArray(parsed)) {
        const a = answer(parsed, false)
        if (a !== 'never') reply(200, { jsonrpc: '2.0', id: parsed.id, ...a })
        return
      }
      if (opts.batches === 'refuse-400') return reply(400, { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'batches are not supported' } })
      if (opts.batches === 'single-error') return reply(200, { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'batches are not supported' } })
      const answers = parsed.map((c) => ({ c, a: answer(c, true) }))
      if (answers.some(({ a }) => a === 'never')) return
      // Answers in reverse order: a batch reply need not keep the calls' order.
      reply(200, answers.reverse().map(({ c, a }) => ({ jsonrpc: '2.0', id: c.id, ...(a as object) })))
    })
  })
  servers.push(server)
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/rpc`, requests }
}

const client = (url: string, opts: { timeout?: number } = {}) =>
  createPublicClient({ transport: httpTransport(url, { fetchFn: createKeepAliveFetch() as unknown as typeof fetch, retryCount: 0, ...opts }) })

const outcome = (p: Promise<unknown>) =>
  p.then(
    (result) => ({ result }),
    (e: { name?: string; details?: string }) => ({ name: e.name, details: e.details }),
  )

const chainAnswers: Answer = ({ method }) => {
  if (method === 'eth_chainId') return { result: '0x2105' }
  if (method === 'eth_blockNumber') return { result: '0x10' }
  if (method === 'eth_gasPrice') return { error: { code: -32000, message: 'header not found' } }
  return { error: { code: -32601, message: `no method ${method}` } }
}

describe('JSON-RPC batches in the keep-alive fetch', () => {
  it('calls made together travel as one batch; each gets its own answer or error, whatever the reply order', async () => {
    const { url, requests } = await node(chainAnswers, { batches: 'yes' })
    const c = client(url)
    const got = await Promise.all([outcome(c.getChainId()), outcome(c.getBlockNumber({ cacheTime: 0 })), outcome(c.getGasPrice())])
    expect(got[0]).toEqual({ result: 8453 })
    expect(got[1]).toEqual({ result: 16n })
    expect(got[2]).toMatchObject({ details: 'header not found' })
    expect(requests).toHaveLength(1)
    expect((requests[0] as Call[]).map((r) => r.method).sort()).toEqual(['eth_blockNumber', 'eth_chainId', 'eth_gasPrice'])
    // A call on its own is sent on its own, not as a batch of one.
    await c.getChainId()
    expect(Array.isArray(requests[1])).toBe(false)
  })

  it('gives viem the same results and errors as one request per call', async () => {
    const { url } = await node(chainAnswers, { batches: 'yes' })
    const calls = (c: ReturnType<typeof client>) => Promise.all([outcome(c.getChainId()), outcome(c.getBlockNumber({ cacheTime: 0 })), outcome(c.getGasPrice())])
    const batched = await calls(client(url))
    const alone = await calls(createPublicClient({ transport: httpTransport(url, { fetchFn: createKeepAliveFetch({ batch: false }) as unknown as typeof fetch, retryCount: 0 }) }))
    expect(batched).toEqual(alone)
  })

  it.each(['refuse-400', 'single-error'] as const)('a node that refuses batches (%s) gets every call again on its own, and no batch after that', async (batches) => {
    const { url, requests } = await node(chainAnswers, { batches })
    const c = client(url)
    const first = await Promise.all([outcome(c.getChainId()), outcome(c.getBlockNumber({ cacheTime: 0 }))])
    expect(first).toEqual([{ result: 8453 }, { result: 16n }])
    const second = await Promise.all([outcome(c.getChainId()), outcome(c.getBlockNumber({ cacheTime: 0 }))])
    expect(second).toEqual(first)
    expect(requests.map((r) => (Array.isArray(r) ? 'batch' : 'single'))).toEqual(['batch', 'single', 'single', 'single', 'single'])
  })

  it('a call the node calls invalid inside a batch is sent again on its own', async () => {
    const { url, requests } = await node(
      (call, inBatch) => (call.method === 'eth_blockNumber' && inBatch ? { error: { code: -32600, message: 'not in a batch' } } : chainAnswers(call, inBatch)),
      { batches: 'yes' },
    )
    const c = client(url)
    expect(await Promise.all([c.getChainId(), c.getBlockNumber({ cacheTime: 0 })])).toEqual([8453, 16n])
    expect(requests.map((r) => (Array.isArray(r) ? 'batch' : (r as Call).method))).toEqual(['batch', 'eth_blockNumber'])
  })

  it('viem’s timeout still ends every call of a batch the node never answers', async () => {
    const { url, requests } = await node((call, inBatch) => (call.method === 'eth_blockNumber' ? 'never' : chainAnswers(call, inBatch)), { batches: 'yes' })
    const c = client(url, { timeout: 100 })
    const got = await Promise.all([outcome(c.getChainId()), outcome(c.getBlockNumber({ cacheTime: 0 }))])
    // The node holds the whole batch back for the call it never answers: both time out, each with its own error.
    expect(got).toEqual([
      { name: 'TimeoutError', details: 'The request timed out.' },
      { name: 'TimeoutError', details: 'The request timed out.' },
    ])
    expect(requests).toHaveLength(1)
  })

  it('an abort of one queued call leaves the rest of the batch alone', async () => {
    const { url, requests } = await node(chainAnswers, { batches: 'yes' })
    const fetchFn = createKeepAliveFetch()
    const gone = new AbortController()
    const body = (id: number, method: string) => JSON.stringify({ jsonrpc: '2.0', id, method })
    const a = fetchFn(url, { body: body(1, 'eth_chainId'), signal: gone.signal })
    const b = fetchFn(url, { body: body(2, 'eth_blockNumber') })
    const d = fetchFn(url, { body: body(3, 'eth_chainId') })
    gone.abort(new Error('client went away'))
    await expect(a).rejects.toThrow('client went away')
    expect(JSON.parse(await (await b).text())).toEqual({ jsonrpc: '2.0', id: 2, result: '0x10' })
    expect(JSON.parse(await (await d).text())).toEqual({ jsonrpc: '2.0', id: 3, result: '0x2105' })
    expect((requests[0] as Call[]).map((r) => r.id).sort()).toEqual([2, 3])
  })

  it('two calls with the same id never share a batch', async () => {
    const { url, requests } = await node(chainAnswers, { batches: 'yes' })
    const fetchFn = createKeepAliveFetch()
    const body = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'eth_chainId' })
    const answers = await Promise.all([fetchFn(url, { body }), fetchFn(url, { body })])
    for (const r of answers) expect(JSON.parse(await r.text())).toEqual({ jsonrpc: '2.0', id: 7, result: '0x2105' })
    expect(requests.map((r) => Array.isArray(r))).toEqual([false, false])
  })
})
