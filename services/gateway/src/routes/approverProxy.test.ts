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
import { makeTestGateway } from '../app.testkit.js'
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
    ['a path that is not the feed', 'GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n'],
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
    expect(await answer(`GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n${upgrade}\r\n`)).toEqual({
      status: 'HTTP/1.1 404 Not Found',
      body: { error: 'not_found', message: 'route GET /v1/health does not exist' },
    })
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
