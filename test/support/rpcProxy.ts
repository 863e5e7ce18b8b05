// A JSON-RPC node in front of anvil that lies or stalls where a test says:
// each call (a batch's calls each on their own) goes to `answer` first, and
// to anvil when that returns undefined.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface RpcCall {
  jsonrpc: string
  id: unknown
  method: string
  params: any[]
}

/** A whole JSON-RPC response object for the call, or undefined to let anvil answer. */
export type RpcAnswer = (call: RpcCall, forward: () => Promise<unknown>) => Promise<unknown> | unknown

export interface RpcProxy {
  url: string
  server: Server
  /** Replaces the answering rule (undefined: every call goes to anvil). */
  answer(rule: RpcAnswer | undefined): void
}

export async function startRpcProxy(target: string, rule?: RpcAnswer): Promise<RpcProxy> {
  let current = rule
  const forward = async (call: RpcCall): Promise<unknown> =>
    (await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(call) })).json()
  const one = async (call: RpcCall): Promise<unknown> => (await current?.(call, () => forward(call))) ?? forward(call)
  const server = createServer((req, res) => {
    let body = ''
    req.on('data', (d) => (body += d))
    req.on('end', async () => {
      const calls = JSON.parse(body) as RpcCall | RpcCall[]
      const answers = Array.isArray(calls) ? await Promise.all(calls.map(one)) : await one(calls)
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answers))
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, answer: (next) => (current = next) }
}

/** The response a node gives with `result`. */
export const resultOf = (call: RpcCall, result: unknown) => ({ jsonrpc: '2.0', id: call.id, result })
