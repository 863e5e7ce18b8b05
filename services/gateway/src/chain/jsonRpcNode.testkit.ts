// A JSON-RPC node over HTTP on 127.0.0.1 that answers each call (a batch's
// calls each on their own) as the test says: for unit tests of what the
// gateway's chain clients make of a node's answers, without a chain.
import http from 'node:http'
import type { AddressInfo } from 'node:net'

export interface JsonRpcCall {
  id: number
  method: string
  params: unknown[]
}

/** What the node does with one call: `{ result }`, `{ error }`, or `{ status }` to answer the whole request with that HTTP status. */
export type NodeAnswer = { result: unknown } | { error: { code: number; message: string; data?: string } } | { status: number }

export interface JsonRpcNode {
  url: string
  /** Every call's method, in order. */
  methods: string[]
  close(): Promise<void>
}

export async function startJsonRpcNode(answer: (call: JsonRpcCall) => NodeAnswer): Promise<JsonRpcNode> {
  const methods: string[] = []
  const server = http.createServer((req, res) => {
    let body = ''
    req.on('data', (c: Buffer) => (body += c))
    req.on('end', () => {
      const parsed = JSON.parse(body) as JsonRpcCall | JsonRpcCall[]
      const calls = Array.isArray(parsed) ? parsed : [parsed]
      const answers = calls.map((call) => {
        methods.push(call.method)
        return { call, answer: answer(call) }
      })
      const failed = answers.find((a) => 'status' in a.answer)
      if (failed) return void res.writeHead((failed.answer as { status: number }).status).end('node unavailable')
      const bodies = answers.map(({ call, answer: a }) => ({ jsonrpc: '2.0', id: call.id, ...a }))
      res.setHeader('content-type', 'application/json')
      res.end(JSON.stringify(Array.isArray(parsed) ? bodies : bodies[0]))
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    methods,
    close: () => new Promise<void>((r) => server.close(() => r())),
  }
}
