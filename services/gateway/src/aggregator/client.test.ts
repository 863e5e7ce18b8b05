// The aggregator is a third party on the internet: whatever it answers, the
// gateway falls back to v3 with a reason, reads no more than a swap answer's
// size, and sends its API key to the configured host only (no redirects).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { floodAnswer } from '@countersign/shared/testing/floodAnswer'
import { actions, makeIntent } from '@countersign/shared/testing/intents'
import type { SwapExactInAction, TxIntent } from '@countersign/shared'
import { afterEach, describe, expect, it } from 'vitest'
import { AggregatorUnavailable, fetchAggregatorQuote, MAX_AGGREGATOR_ANSWER_BYTES } from './client.js'

const KEY = 'k'.repeat(32)
const intent = makeIntent({ action: actions.swapIn() }) as TxIntent & { action: SwapExactInAction }
const ROUTER = '0x111111125421cA6dc452d289314280a0f8842A65'
const servers: Array<ReturnType<typeof createServer>> = []

afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections()
    await new Promise((r) => s.close(r))
  }
})

/** A local HTTP server answering with `handle`; its base URL and the requests it saw (path and authorization). */
async function serve(handle: (req: IncomingMessage, res: ServerResponse) => void) {
  const seen: Array<{ path: string; authorization: string | undefined }> = []
  const server = createServer((req, res) => {
    seen.push({ path: req.url ?? '', authorization: req.headers.authorization })
    handle(req, res)
  })
  servers.push(server)
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/swap/v6.0`, seen }
}

const quote = (url: string, timeoutMs = 2000, slippageBps = 50) => fetchAggregatorQuote({ apiKey: KEY, baseUrl: url, timeoutMs }, intent, slippageBps)
const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(JSON.stringify(body))
}

describe('fetchAggregatorQuote', () => {
  it('asks in the API format with the key and takes a well-formed answer', async () => {
    const api = await serve((_req, res) => json(res, 200, { dstAmount: '123', tx: { to: ROUTER, data: '0x12345678', value: '0' } }))
    expect(await quote(api.url)).toEqual({ to: ROUTER, data: '0x12345678', value: '0', dstAmount: '123' })
    expect(api.seen).toEqual([{ path: expect.stringMatching(/^\/swap\/v6\.0\/8453\/swap\?src=/), authorization: `Bearer ${KEY}` }])
  })

  // Second review: asked with the intent's 500 bps while the guard held it to the policy's 300, an honest
  // quote's minimum was below the floor and the aggregator was never used.
  it('asks with the slippage it is given (the one the price guard applies), in percent', async () => {
    const api = await serve((_req, res) => json(res, 200, { dstAmount: '1', tx: { to: ROUTER, data: '0x', value: '0' } }))
    await quote(api.url, 2000, 300)
    await quote(api.url, 2000, 0)
    expect(api.seen.map((r) => new URL(r.path, 'http://x').searchParams.get('slippage'))).toEqual(['3', '0.01'])
  })

  it('does not follow a redirect: the key goes nowhere else', async () => {
    const elsewhere = await serve((_req, res) => json(res, 200, { dstAmount: '1', tx: { to: ROUTER, data: '0x', value: '0' } }))
    for (const status of [301, 302, 307, 308]) {
      const api = await serve((_req, res) => {
        res.writeHead(status, { location: `${elsewhere.url}/8453/swap` })
        res.end()
      })
      await expect(quote(api.url)).rejects.toThrow(/aggregator unreachable: fetch failed \(unexpected redirect\)/)
    }
    expect(elsewhere.seen).toEqual([])
  })

  it('a URL fetch refuses (credentials in it) is described without quoting it: the password reaches no description, log or audit row', async () => {
    const err = await quote('https://alice:S3CRET@127.0.0.1:9/swap/v6.0').catch((e: unknown) => e)
    expect(err).toBeInstanceOf(AggregatorUnavailable)
    expect((err as Error).message).toBe('aggregator unreachable: the request could not be made (TypeError)')
    expect((err as Error).message).not.toContain('S3CRET')
  })

  it('stops reading an answer past the size of a swap answer, declared or streamed, and drops the rest unread', async () => {
    const declared = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(10 * 1024 * 1024) })
      res.write('{"tx":')
    })
    await expect(quote(declared.url)).rejects.toThrow(`aggregator answer larger than ${MAX_AGGREGATOR_ANSWER_BYTES} bytes`)

    let streamed = () => 0
    const endless = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      streamed = floodAnswer(res, 64 * 1024 * 1024)
    })
    await expect(quote(endless.url)).rejects.toThrow(`aggregator answer larger than ${MAX_AGGREGATOR_ANSWER_BYTES} bytes`)
    expect(streamed()).toBeLessThan(16 * 1024 * 1024)
  })

  it('says why for every other failure', async () => {
    const cases: Array<[(req: IncomingMessage, res: ServerResponse) => void, RegExp]> = [
      [(_req, res) => json(res, 429, { description: 'Too Many Requests' }), /^aggregator rate limit \(429\)$/],
      [(_req, res) => json(res, 500, { description: 'oops' }), /^aggregator answered 500$/],
      [(_req, res) => json(res, 200, { hello: 'world' }), /^aggregator answer has no usable tx$/],
      [(_req, res) => res.end('not json'), /^aggregator answer has no usable tx$/],
      [(_req, res) => json(res, 200, { tx: { to: 'nope', data: '0x' } }), /^aggregator answer has no usable tx$/],
      [(_req, res) => json(res, 200, { tx: { to: `0x${'11'.repeat(20)}`, data: `0x${'ab'.repeat(32768)}` } }), /^aggregator calldata is 65538 hex characters, more than the 65536 a transaction request may carry$/],
      [() => {}, /^aggregator unreachable: no answer within 300 ms$/],
    ]
    for (const [handle, message] of cases) {
      const api = await serve(handle)
      // 300 ms only for the server that never answers: on a loaded machine an answer can take longer (seen in a full run).
      const silent = message.source.includes('no answer within')
      const err = await quote(api.url, silent ? 300 : 10_000).catch((e: unknown) => e)
      expect(err).toBeInstanceOf(AggregatorUnavailable)
      expect((err as Error).message).toMatch(message)
    }
    // A body that stops arriving: the timeout covers reading it too.
    const stalled = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.write('{"tx":')
    })
    await expect(quote(stalled.url, 300)).rejects.toThrow(/^aggregator unreachable: no answer within 300 ms$/)
    await expect(fetchAggregatorQuote({ apiKey: null, baseUrl: 'http://127.0.0.1:9', timeoutMs: 300 }, intent, 50)).rejects.toThrow('no AGGREGATOR_API_KEY')
  })
})
