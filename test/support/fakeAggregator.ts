// A local stand-in for the aggregator's swap API (the real one is on the
// internet, unreachable here). It speaks the 1inch Swap API v6 request and
// response format: GET /{chainId}/swap?src&dst&amount&from&origin&receiver&slippage
// with a bearer key, answering {dstAmount, tx: {from, to, data, value, gas, gasPrice}}.
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { AGGREGATOR_ROUTER } from '@countersign/shared'
import { aggregatorSwapCalldata } from '@countersign/shared/testing/aggregator'

export type FakeMode = 'ok' | 'wrong_receiver' | 'low_minimum' | 'rate_limited' | 'wrong_router' | 'garbage'

export interface FakeAggregator {
  url: string
  mode: FakeMode
  /** The guaranteed minimum of an 'ok' quote (each quote adds one more): the gateway uses it only if it reaches the v3 route's output less slippage. */
  minReturn: bigint
  requests: Array<{ path: string; query: Record<string, string>; authorization: string | undefined }>
  close(): Promise<void>
}

export async function startFakeAggregator(apiKey: string): Promise<FakeAggregator> {
  const fake: FakeAggregator = { url: '', mode: 'ok', minReturn: 1_000_000_000_000n, requests: [], close: async () => {} }
  let quotes = 0
  const server = http.createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x')
    const query = Object.fromEntries(u.searchParams)
    fake.requests.push({ path: u.pathname, query, authorization: req.headers.authorization })
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' })
      res.end(JSON.stringify(body))
    }
    if (req.headers.authorization !== `Bearer ${apiKey}`) return send(401, { statusCode: 401, description: 'Unauthorized' })
    if (!/^\/\d+\/swap$/.test(u.pathname)) return send(404, { statusCode: 404, description: 'Not found' })
    if (fake.mode === 'rate_limited') return send(429, { statusCode: 429, description: 'Too Many Requests' })
    if (fake.mode === 'garbage') return send(200, { hello: 'world' })
    quotes += 1
    // Each quote a little better than the last: a second quote would differ.
    const minReturn = fake.minReturn + BigInt(quotes)
    const data = aggregatorSwapCalldata({
      src: query.src,
      dst: query.dst,
      amount: BigInt(query.amount ?? '0'),
      receiver: fake.mode === 'wrong_receiver' ? '0x000000000000000000000000000000000000dead' : query.receiver,
      minReturn: fake.mode === 'low_minimum' ? 0n : minReturn,
    })
    send(200, {
      dstAmount: (minReturn + 100n).toString(),
      tx: {
        from: query.from,
        to: fake.mode === 'wrong_router' ? '0x0000000000000000000000000000000000000bad' : AGGREGATOR_ROUTER,
        data,
        value: '0',
        gas: 180000,
        gasPrice: '1000000000',
      },
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  fake.close = () => new Promise((r) => server.close(() => r()))
  return fake
}
