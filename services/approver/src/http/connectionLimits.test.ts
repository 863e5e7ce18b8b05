// The approver's bounds on slow clients, on its TCP port and on the HTTP
// socket the gateway forwards to: a request must arrive in time, while the
// dashboard's feed stays open as long as it is used.
import { randomUUID } from 'node:crypto'
import { once } from 'node:events'
import net from 'node:net'
import WebSocket from 'ws'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { OPERATOR_TOKEN as TOKEN, startListeningApprover, type ListeningApprover } from './listeningApprover.testkit.js'

const LIMITS = { headersTimeoutMs: 1000, requestTimeoutMs: 2000, maxConnections: 20 }

let approver: ListeningApprover
let port: number
let socketPath: string

beforeAll(async () => {
  approver = await startListeningApprover({ connectionLimits: LIMITS })
  port = approver.port
  socketPath = approver.socketPath
})
afterAll(async () => {
  await approver?.close()
})

/** Writes `bytes` and stays silent; what the server sent and after how long it closed, or a failure after `ms`. */
function silentAfter(connect: () => net.Socket, bytes: string, ms: number): Promise<{ afterMs: number; received: string }> {
  const started = Date.now()
  const s = connect()
  let received = ''
  s.on('data', (d) => (received += d))
  s.on('error', () => undefined)
  s.write(bytes)
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      s.destroy()
      reject(new Error(`the connection was still open after ${ms} ms`))
    }, ms)
    s.on('close', () => {
      clearTimeout(timer)
      resolve({ afterMs: Date.now() - started, received })
    })
  })
}

const body = JSON.stringify({ approved: true, note: 'x'.repeat(10_000) })
const slowDecide = `POST /v1/approvals/${randomUUID()}/decide HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n` + body.slice(0, -1)

describe('slow clients of the approver', () => {
  it.each([
    ['its TCP port', () => net.connect(port, '127.0.0.1')],
    ['the HTTP socket the gateway forwards to', () => net.connect(socketPath)],
  ])('a body that stops one byte short, on %s, is answered 408 in the spec shape and closed within the request timeout', async (_where, connect) => {
    const { afterMs, received } = await silentAfter(connect, slowDecide, LIMITS.requestTimeoutMs + 3000)
    expect(afterMs).toBeGreaterThanOrEqual(LIMITS.requestTimeoutMs - 100)
    const [head, json] = received.split('\r\n\r\n') as [string, string]
    expect(head.split('\r\n')[0]).toBe('HTTP/1.1 408 Request Timeout')
    expect(head).toMatch(/\r\nx-service-version: 0\.1\.0\r\n/i)
    expect(JSON.parse(json)).toEqual({ statusCode: 408, error: 'Request Timeout', message: 'the request did not arrive in time' })
  })

  it('the dashboard feed, once signed in, stays open past the request timeout', async () => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/v1/approvals/ws`)
    const messages: string[] = []
    ws.on('message', (d) => messages.push(String(d)))
    await once(ws, 'open')
    ws.send(JSON.stringify({ type: 'auth', token: TOKEN }))
    await new Promise((r) => setTimeout(r, LIMITS.requestTimeoutMs + 2000))
    expect(ws.readyState).toBe(WebSocket.OPEN)
    expect(messages.map((m) => (JSON.parse(m) as { type: string }).type)).toContain('pending')
    ws.close()
  })

  it.each([
    ['its TCP port', () => net.connect(port, '127.0.0.1')],
    ['the HTTP socket the gateway forwards to', () => net.connect(socketPath)],
  ])('on %s, feeds that never sign in make room for newcomers once a second old; a signed-in feed is never closed for room', async (_where, connect) => {
    // Found by review: an upgraded connection was never let go, so feeds
    // that never sent a token could hold every connection.
    const signedIn = rawConnection(connect, UPGRADE)
    await until('upgraded', () => signedIn.received.startsWith('HTTP/1.1 101 '))
    signedIn.socket.write(maskedTextFrame(JSON.stringify({ type: 'auth', token: TOKEN })))
    await until('signed in', () => signedIn.received.includes('"type":"pending"'))
    const feeds = Array.from({ length: LIMITS.maxConnections - 1 }, () => rawConnection(connect, UPGRADE))
    await until('upgraded', () => feeds.every((f) => f.received.startsWith('HTTP/1.1 101 ')))
    await new Promise((r) => setTimeout(r, 1100))
    const newcomers = Array.from({ length: LIMITS.maxConnections - 1 }, () => rawConnection(connect, PENDING_LIST))
    await until('answered', () => newcomers.every((c) => c.received.includes('\r\n\r\n')))
    expect(newcomers.map((c) => c.received.split('\r\n')[0])).toEqual(newcomers.map(() => 'HTTP/1.1 200 OK'))
    const extra = rawConnection(connect, PENDING_LIST)
    await until('refused', () => extra.closed)
    expect(extra.received.split('\r\n')[0]).toBe('HTTP/1.1 503 Service Unavailable')
    await until('closed', () => feeds.every((f) => f.closed))
    expect(signedIn.closed).toBe(false)
    for (const c of [signedIn, ...newcomers]) c.socket.destroy()
  })

  it('a feed refused for want of a token is cut a second after its closing frame when its client never answers it', async () => {
    // Before, the WebSocket library waited 30 s for the client's closing frame, holding the connection.
    const quick = await startListeningApprover({ connectionLimits: LIMITS, wsAuthTimeoutMs: 200 })
    try {
      const started = Date.now()
      const feed = rawConnection(() => net.connect(quick.port, '127.0.0.1'), UPGRADE)
      await until('closed', () => feed.closed, 4000)
      expect(feed.received).toMatch(/^HTTP\/1\.1 101 /)
      expect(Date.now() - started).toBeLessThan(200 + 1000 + 1500)
    } finally {
      await quick.close()
    }
  })
})

const UPGRADE = 'GET /v1/approvals/ws HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n'
const PENDING_LIST = `GET /v1/approvals/pending HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`

/** A connection that sends `bytes` and keeps what it receives; never answers anything (a closing frame included). */
function rawConnection(connect: () => net.Socket, bytes: string) {
  const socket = connect()
  const conn = { socket, received: '', closed: false }
  socket.on('data', (d) => (conn.received += d))
  socket.on('error', () => undefined)
  socket.on('close', () => (conn.closed = true))
  socket.write(bytes)
  return conn
}

async function until(what: string, done: () => boolean, ms = 3000): Promise<void> {
  for (let waited = 0; !done(); waited += 20) {
    if (waited > ms) throw new Error(`still not ${what} after ${ms} ms`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

/** One client-to-server WebSocket text frame (RFC 6455 §5.2: FIN, opcode 1, masked), for payloads under 126 bytes. */
function maskedTextFrame(text: string): Buffer {
  const payload = Buffer.from(text)
  const mask = Buffer.from([1, 2, 3, 4])
  return Buffer.concat([Buffer.from([0x81, 0x80 | payload.length]), mask, payload.map((b, i) => b ^ mask[i % 4]!)])
}
