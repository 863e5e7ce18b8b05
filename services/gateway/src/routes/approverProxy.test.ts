// The WebSocket upgrade path of the gateway, over real sockets: what any
// client on the host can send before the approver is even involved.
import { mkdtempSync } from 'node:fs'
import http from 'node:http'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { once } from 'node:events'
import { afterEach, describe, expect, it } from 'vitest'
import { randomUUID } from 'node:crypto'
import Fastify from 'fastify'
import { rawExchange, type RawAnswer } from '@countersign/shared/testing/rawExchange'
import { WALLET } from '@countersign/shared/testing/intents'
import { makeTestGateway } from '../app.testkit.js'
import { createSentTxs } from '../store/sentTxs.js'
import { APPROVER_TIMEOUT_MS, approverProxyRoutes } from './approverProxy.js'

let gw: Awaited<ReturnType<typeof makeTestGateway>> | undefined
afterEach(async () => {
  await gw?.close()
  gw = undefined
})

async function listening() {
  gw = await makeTestGateway()
  await gw.app.listen({ host: '127.0.0.1', port: 0 })
  return (gw.app.server.address() as net.AddressInfo).port
}

/** An upgrade request, then a TCP reset instead of reading the answer. */
async function upgradeThenReset(port: number, request: string) {
  const s = net.connect(port, '127.0.0.1')
  await once(s, 'connect')
  s.write(request)
  s.resetAndDestroy()
  await once(s, 'close')
}

describe('upgrade requests the gateway refuses', () => {
  it.each([
    ['a WebSocket offer to a path that is not the feed (served as plain HTTP)', 'GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n'],
    ['an h2c offer (served as plain HTTP)', 'GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n\r\n'],
    ['a Host that is not allowed', 'GET /v1/approvals/ws HTTP/1.1\r\nHost: evil.example\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n'],
    ['a foreign Origin', 'GET /v1/approvals/ws HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: http://evil.example\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n'],
  ])('%s, from a client that resets the connection at once, do not end the gateway', async (_what, request) => {
    const port = await listening()
    for (let i = 0; i < 30; i++) await upgradeThenReset(port, request)
    // Give a late socket error its turn, then the gateway must still answer.
    await new Promise((r) => setTimeout(r, 50))
    const res = await fetch(`http://127.0.0.1:${port}/v1/health`)
    expect(res.status).toBe(200)
  })

  it("a client that reads the refusal gets the body the same request gets without Upgrade, in the spec's shape, with the version headers", async () => {
    const port = await listening()
    const answer = async (request: string) => {
      const s = net.connect(port, '127.0.0.1')
      await once(s, 'connect')
      s.write(request)
      let text = ''
      s.on('data', (d) => (text += d))
      await once(s, 'close')
      const [head, body] = text.split('\r\n\r\n') as [string, string]
      expect(head).toMatch(/\r\ncontent-type: application\/json; charset=utf-8\r\n/i)
      expect(head).toMatch(/\r\nx-service-version: 0\.1\.0\r\n/i)
      expect(head).toMatch(/\r\nx-content-type-options: nosniff\r\n/i)
      return { status: head.split('\r\n')[0], body: JSON.parse(body) as unknown }
    }
    const upgrade = 'Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n'
    expect(await answer(`GET /v1/approvals/ws HTTP/1.1\r\nHost: evil.example\r\n${upgrade}\r\n`)).toEqual({
      status: 'HTTP/1.1 403 Forbidden',
      body: { error: 'host_not_allowed', message: 'Host header "evil.example" is not allowed; use localhost or 127.0.0.1' },
    })
    expect(await answer(`GET /v1/approvals/ws HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: http://evil.example\r\n${upgrade}\r\n`)).toEqual({
      status: 'HTTP/1.1 403 Forbidden',
      body: { error: 'origin_not_allowed', message: 'the approval feed is not available to pages from http://evil.example' },
    })
    // The test gateway's approver socket does not exist.
    expect(await answer(`GET /v1/approvals/ws HTTP/1.1\r\nHost: 127.0.0.1\r\n${upgrade}\r\n`)).toEqual({
      status: 'HTTP/1.1 503 Service Unavailable',
      body: { error: 'approver_unavailable', message: 'the approver is not reachable' },
    })
  })
})

describe('requests with an upgrade offer the gateway does not take', () => {
  // What curl --http2 sends on a plain-http URL, on every request.
  const h2c = 'Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n'
  const websocket = 'Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n'
  const shown = (a: RawAnswer) => ({ status: a.statusLine, type: a.headers['content-type'], version: a.headers['x-service-version'], body: a.body })

  it('a signed transaction asked for with "Upgrade: h2c" (curl --http2) is answered as without it, not 404 not_found', async () => {
    const port = await listening()
    const intentId = randomUUID()
    const txHash = `0x${'ab'.repeat(32)}`
    createSentTxs(gw!.db).save({ intentId, chainId: 8453, wallet: WALLET, txRequestHash: `0x${'11'.repeat(32)}`, nonce: 7, txHash, signedTx: '0x02f8aa', broadcastOk: true, deadline: null }, gw!.clock())
    const plain = await rawExchange(port, `GET /v1/intents/${intentId}/tx HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`)
    const offered = await rawExchange(port, `GET /v1/intents/${intentId}/tx HTTP/1.1\r\nHost: 127.0.0.1\r\n${h2c}\r\n`)
    expect(plain.answers[0]!.statusLine).toBe('HTTP/1.1 200 OK')
    expect(JSON.parse(plain.answers[0]!.body)).toMatchObject({ intentId, txHash, broadcast: true })
    expect(offered.answers.map(shown)).toEqual(plain.answers.map(shown))
  })

  it('a POST with a body and an h2c offer has its body read and is answered as without the offer; the connection stays HTTP/1.1 for the next request', async () => {
    const port = await listening()
    const body = JSON.stringify({ note: 1 })
    const post = (extra: string) => `POST /v1/tx/build HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n${extra}\r\n${body}`
    const plain = await rawExchange(port, post(''))
    expect(plain.answers[0]!.statusLine).toBe('HTTP/1.1 400 Bad Request')
    const offered = await rawExchange(port, post(h2c) + 'GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n', 2)
    expect(offered.answers.map(shown)[0]).toEqual(plain.answers.map(shown)[0])
    expect(offered.answers[1]!.statusLine).toBe('HTTP/1.1 200 OK')
    expect(JSON.parse(offered.answers[1]!.body)).toMatchObject({ status: 'ok' })
    expect(offered.closedByServer).toBe(false)
  })

  it('a WebSocket offer to a route that is not the feed is served as plain HTTP too, under the same Host guard', async () => {
    const port = await listening()
    const plain = await rawExchange(port, 'GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
    const offered = await rawExchange(port, `GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n${websocket}\r\n`)
    expect(offered.answers.map(shown)).toEqual(plain.answers.map(shown))
    const foreign = await rawExchange(port, `GET /v1/health HTTP/1.1\r\nHost: evil.example\r\n${h2c}\r\n`)
    expect(foreign.answers[0]!.statusLine).toBe('HTTP/1.1 403 Forbidden')
    expect(JSON.parse(foreign.answers[0]!.body)).toMatchObject({ error: 'host_not_allowed' })
  })

  it('a POST to the feed offering a WebSocket is a POST: answered as without the offer, never sent to the approver as a GET handshake', async () => {
    // Found by review: the gateway wrote "GET /v1/approvals/ws" to the approver whatever the method was, and the approver upgraded it.
    const socketPath = path.join(mkdtempSync(path.join(os.tmpdir(), 'cs-feed-')), 'approver-http.sock')
    let approverSaw = ''
    const approver = net.createServer((c) => {
      c.on('data', (d) => (approverSaw += d.toString('latin1')))
      c.on('error', () => undefined)
    })
    await new Promise<void>((resolve) => approver.listen(socketPath, resolve))
    try {
      gw = await makeTestGateway({ approverHttpSocket: socketPath })
      await gw.app.listen({ host: '127.0.0.1', port: 0 })
      const port = (gw.app.server.address() as net.AddressInfo).port
      const post = (extra: string) => `POST /v1/approvals/ws HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n${extra}\r\n`
      const plain = await rawExchange(port, post(''))
      const offered = await rawExchange(port, post(websocket))
      expect(plain.answers[0]!.statusLine).toBe('HTTP/1.1 404 Not Found')
      expect(offered.answers.map(shown)).toEqual(plain.answers.map(shown))
      expect(approverSaw).toBe('')
    } finally {
      approver.close()
    }
  })

  it('a body offered with h2c that stops short is still cut by the request timeout', async () => {
    gw = await makeTestGateway({ connectionLimits: { headersTimeoutMs: 500, requestTimeoutMs: 1000, maxConnections: 20 } })
    await gw.app.listen({ host: '127.0.0.1', port: 0 })
    const port = (gw.app.server.address() as net.AddressInfo).port
    const started = Date.now()
    const cut = await rawExchange(port, `POST /v1/tx/build HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n${h2c}\r\n{"note":`)
    expect(Date.now() - started).toBeLessThan(3000)
    expect(cut.answers[0]!.statusLine).toBe('HTTP/1.1 408 Request Timeout')
    expect(cut.closedByServer).toBe(true)
  })

  it('CONNECT is answered 405 in the spec shape, not dropped without a word', async () => {
    const port = await listening()
    const res = await rawExchange(port, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n')
    expect(res.answers.map(shown)).toEqual([
      { status: 'HTTP/1.1 405 Method Not Allowed', type: 'application/json; charset=utf-8', version: '0.1.0', body: JSON.stringify({ statusCode: 405, error: 'Method Not Allowed', message: 'CONNECT is not supported: this service is not a proxy' }) },
    ])
    expect(res.answers[0]!.headers.allow).toBe('GET, HEAD, POST, DELETE')
    expect(res.closedByServer).toBe(true)
  })
})

describe('the dashboard proxy', () => {
  it('an approver that goes away in the middle of its answer is 503 approver_unavailable, not a 500', async () => {
    const approver = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' })
      res.write('{"pending":[')
      setTimeout(() => res.socket?.destroy(), 20)
    })
    const socket = path.join(mkdtempSync(path.join(os.tmpdir(), 'cs-approver-http-')), 'approver-http.sock')
    await new Promise<void>((r) => approver.listen(socket, r))
    try {
      gw = await makeTestGateway({ approverHttpSocket: socket })
      const res = await gw.app.inject({ method: 'GET', url: '/v1/approvals/pending' })
      expect(res.statusCode).toBe(503)
      expect(res.json()).toEqual({ error: 'approver_unavailable', message: 'the approver received the request but gave no answer (the approver stopped in the middle of its answer)' })
    } finally {
      approver.closeAllConnections()
      await new Promise((r) => approver.close(r))
    }
  })

  it("an approver that takes a decide and gives no answer: 503 saying the decision may have been taken, not 'not reachable'; the wait is longer than the approver's own calls to the signer", async () => {
    let received = 0
    const approver = http.createServer(() => void (received += 1)) // takes the request, never answers
    const socket = path.join(mkdtempSync(path.join(os.tmpdir(), 'cs-approver-http-')), 'approver-http.sock')
    await new Promise<void>((r) => approver.listen(socket, r))
    const app = Fastify()
    try {
      await app.register(approverProxyRoutes, { approverSocket: socket, timeoutMs: 300 })
      const res = await app.inject({ method: 'POST', url: `/v1/approvals/${randomUUID()}/decide`, payload: { approved: true } })
      expect(received).toBe(1)
      expect(res.statusCode).toBe(503)
      expect(res.json().error).toBe('approver_unavailable')
      expect(res.json().message).toMatch(/^the approver received the request but gave no answer \(the approver did not answer within 0.3 s\): the decision may or may not have been taken; GET \/v1\/approvals\/pending shows whether the request still waits$/)
      // Nothing listening at all: nothing was decided, and it says so.
      const none = Fastify()
      await none.register(approverProxyRoutes, { approverSocket: `${socket}.absent` })
      const down = await none.inject({ method: 'POST', url: `/v1/approvals/${randomUUID()}/decide`, payload: { approved: true } })
      expect(down.json()).toEqual({ error: 'approver_unavailable', message: 'the approver is not reachable' })
      await none.close()
    } finally {
      await app.close()
      approver.closeAllConnections()
      await new Promise((r) => approver.close(r))
    }
    // The approver's decide mints a token and waits for its fsync, two signer calls of up to 10 s each.
    expect(APPROVER_TIMEOUT_MS).toBeGreaterThan(2 * 10_000)
  })
})
