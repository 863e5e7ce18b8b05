import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { createPublicClient, http as httpTransport } from 'viem'
import { createKeepAliveFetch, type SlowRpcCall } from './keepAliveFetch.js'

type Handler = (body: string, req: http.IncomingMessage, res: http.ServerResponse) => void

const servers: http.Server[] = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))))
})

/** A local HTTP server answering with `handler`; records the client port of each request (same port: same socket). */
async function serve(handler: Handler): Promise<{ url: string; ports: number[] }> {
  const ports: number[] = []
  const server = http.createServer((req, res) => {
    ports.push(req.socket.remotePort!)
    let body = ''
    req.on('data', (d) => (body += d))
    req.on('end', () => handler(body, req, res))
  })
  servers.push(server)
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/rpc`, ports }
}

const json = (res: http.ServerResponse, status: number, value: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(JSON.stringify(value))
}

describe('createKeepAliveFetch', () => {
  it('posts the body with its headers and answers status, headers and text; consecutive calls reuse one socket', async () => {
    const seen: Array<{ body: string; type: string | undefined; method: string | undefined }> = []
    const { url, ports } = await serve((body, req, res) => {
      seen.push({ body, type: req.headers['content-type'], method: req.method })
      json(res, 200, { jsonrpc: '2.0', id: 1, result: '0x2105' })
    })
    const fetchFn = createKeepAliveFetch()
    for (let i = 0; i < 3; i++) {
      const r = await fetchFn(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' })
      expect(r.ok).toBe(true)
      expect(r.status).toBe(200)
      expect(r.headers.get('Content-Type')).toBe('application/json')
      expect(JSON.parse(await r.text())).toEqual({ jsonrpc: '2.0', id: 1, result: '0x2105' })
    }
    expect(seen).toEqual(Array(3).fill({ body: '{"a":1}', type: 'application/json', method: 'POST' }))
    expect(new Set(ports).size).toBe(1)
  })

  it('through viem: results, JSON-RPC errors and HTTP errors come out exactly as with the global fetch', async () => {
    const { url } = await serve((body, _req, res) => {
      const { id, method } = JSON.parse(body) as { id: number; method: string }
      if (method === 'eth_chainId') return json(res, 200, { jsonrpc: '2.0', id, result: '0x2105' })
      if (method === 'eth_blockNumber') return json(res, 200, { jsonrpc: '2.0', id, error: { code: -32000, message: 'header not found' } })
      if (method === 'eth_call') return json(res, 200, { jsonrpc: '2.0', id, error: { code: 3, message: 'execution reverted', data: '0x08c379a0' } })
      res.writeHead(503, { 'content-type': 'text/plain' })
      res.end('overloaded')
    })
    const keepAlive = createKeepAliveFetch() as unknown as typeof fetch
    const clientWith = (fetchFn: typeof fetch) => createPublicClient({ transport: httpTransport(url, { fetchFn, retryCount: 0 }) })
    const outcome = (p: Promise<unknown>) =>
      p.then(
        (result) => ({ result }),
        (e: { name?: string; code?: number; status?: number; details?: string; shortMessage?: string }) => ({ name: e.name, code: e.code, status: e.status, details: e.details, shortMessage: e.shortMessage }),
      )
    const calls = [
      (c: ReturnType<typeof clientWith>) => c.getChainId(),
      (c: ReturnType<typeof clientWith>) => c.getBlockNumber(),
      (c: ReturnType<typeof clientWith>) => c.call({ to: '0x000000000000000000000000000000000000bEEF', data: '0x' }),
      (c: ReturnType<typeof clientWith>) => c.getGasPrice(),
    ]
    const ours = await Promise.all(calls.map((call) => outcome(call(clientWith(keepAlive)))))
    const theirs = await Promise.all(calls.map((call) => outcome(call(clientWith(fetch)))))
    expect(ours).toEqual(theirs)
    expect(ours[0]).toEqual({ result: 8453 })
    expect(ours[1]).toMatchObject({ details: 'header not found' })
    expect(ours[3]).toMatchObject({ name: 'HttpRequestError', status: 503 })
  })

  it('an answer larger than the ceiling is refused', async () => {
    const { url } = await serve((_body, _req, res) => json(res, 200, { result: 'x'.repeat(5000) }))
    await expect(createKeepAliveFetch({ maxBodyBytes: 1000 })(url, { body: '{}' })).rejects.toThrow('larger than 1000 bytes')
  })

  it('an abort ends the request at once with the signal’s reason', async () => {
    const { url } = await serve(() => undefined) // never answers
    const controller = new AbortController()
    const pending = createKeepAliveFetch()(url, { body: '{}', signal: controller.signal })
    setTimeout(() => controller.abort(new Error('timed out here')), 20)
    await expect(pending).rejects.toThrow('timed out here')
  })

  it('viem’s timeout applies to a node that does not answer', async () => {
    const { url } = await serve(() => undefined)
    const fetchFn = createKeepAliveFetch() as unknown as typeof fetch
    const client = createPublicClient({ transport: httpTransport(url, { fetchFn, retryCount: 0, timeout: 50 }) })
    await expect(client.getChainId()).rejects.toMatchObject({ name: 'TimeoutError' })
  })

  it('a refused connection is an error, not a hang', async () => {
    const { url } = await serve(() => undefined)
    await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))))
    await expect(createKeepAliveFetch()(url, { body: '{}' })).rejects.toMatchObject({ code: 'ECONNREFUSED' })
  })

  describe('slow or unanswered calls are reported, naming only the host', () => {
    const post = { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"id":1}' }

    it('an answer slower than the threshold is reported once, a fast one not; the URL path (an API key) is never in it', async () => {
      const { url } = await serve((_body, req, res) => {
        const wait = req.url!.includes('slow') ? 80 : 0
        setTimeout(() => json(res, 200, { jsonrpc: '2.0', id: 1, result: '0x1' }), wait)
      })
      const reports: SlowRpcCall[] = []
      const fetchFn = createKeepAliveFetch({ batch: false, slowMs: 40, onSlowCall: (r) => reports.push(r) })
      const fast = await fetchFn(`${url}/fast/KEY123`, post)
      expect(fast.status).toBe(200)
      expect(reports).toEqual([])
      const slow = await fetchFn(`${url}/slow/KEY123`, post)
      expect(JSON.parse(await slow.text())).toEqual({ jsonrpc: '2.0', id: 1, result: '0x1' })
      expect(reports).toEqual([{ host: new URL(url).host, ms: expect.any(Number), calls: 1, outcome: 'answered' }])
      expect(reports[0]!.ms).toBeGreaterThanOrEqual(40)
      expect(JSON.stringify(reports)).not.toContain('KEY123')
    })

    it('a call aborted by its timeout and a refused connection are reported whatever their time, and still fail as before', async () => {
      const { url } = await serve(() => undefined) // never answers
      const reports: SlowRpcCall[] = []
      const fetchFn = createKeepAliveFetch({ batch: false, onSlowCall: (r) => reports.push(r) })
      await expect(fetchFn(url, { ...post, signal: AbortSignal.timeout(30) })).rejects.toThrow()
      const closed = await serve(() => undefined)
      const port = new URL(closed.url).port
      await new Promise((r) => servers.pop()!.close(r))
      await expect(fetchFn(`http://127.0.0.1:${port}/`, post)).rejects.toThrow(/ECONNREFUSED/)
      expect(reports).toEqual([
        { host: new URL(url).host, ms: expect.any(Number), calls: 1, outcome: 'aborted', error: expect.any(String) },
        { host: `127.0.0.1:${port}`, ms: expect.any(Number), calls: 1, outcome: 'failed', error: expect.stringMatching(/ECONNREFUSED/) },
      ])
    })

    it('a batch is reported with the number of calls it carried; a throwing reporter changes nothing', async () => {
      const { url } = await serve((body, _req, res) => {
        const calls = JSON.parse(body) as Array<{ id: number }>
        setTimeout(() => json(res, 200, calls.map((c) => ({ jsonrpc: '2.0', id: c.id, result: '0x1' }))), 60)
      })
      const reports: SlowRpcCall[] = []
      const fetchFn = createKeepAliveFetch({ slowMs: 20, onSlowCall: (r) => (reports.push(r), assertNever()) })
      const answers = await Promise.all([1, 2, 3].map((id) => fetchFn(url, { ...post, body: JSON.stringify({ jsonrpc: '2.0', id, method: 'eth_blockNumber' }) })))
      expect(await Promise.all(answers.map(async (a) => JSON.parse(await a.text()).id))).toEqual([1, 2, 3])
      expect(reports).toEqual([{ host: new URL(url).host, ms: expect.any(Number), calls: 3, outcome: 'answered' }])
    })
  })
})

function assertNever(): never {
  throw new Error('a reporter that throws')
}
