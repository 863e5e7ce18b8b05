// The gateway's bounds on slow clients, on real TCP sockets: a request must
// arrive in time and the connections held at once are capped, while what
// legitimately stays open long (an approve-request waiting for its
// operator, the dashboard's feed) is left alone.
import { mkdtempSync } from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { once } from 'node:events'
import { afterEach, describe, expect, it } from 'vitest'
import { approverMethods, noPreflight } from '@countersign/shared'
import { connectionLimitsOf, DEFAULT_CONNECTION_LIMITS } from '@countersign/shared/http/connectionLimits'
import { actions, makeIntent } from '@countersign/shared/testing/intents'
import { makeTestGateway } from './app.testkit.js'

const LIMITS = { headersTimeoutMs: 1000, requestTimeoutMs: 2000, maxConnections: 20 }

let gw: Awaited<ReturnType<typeof makeTestGateway>> | undefined
const sockets: net.Socket[] = []
const servers: net.Server[] = []
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy()
  for (const s of servers.splice(0)) s.close()
  await gw?.close()
  gw = undefined
})

async function listening(opts: Parameters<typeof makeTestGateway>[0] = {}) {
  gw = await makeTestGateway({ connectionLimits: LIMITS, ...opts })
  await gw.app.listen({ host: '127.0.0.1', port: 0 })
  return (gw.app.server.address() as net.AddressInfo).port
}

/** A connection that writes `bytes` and then stays silent; `ended` is what the server sent and when it closed. */
async function silentAfter(port: number, bytes: string) {
  const started = Date.now()
  const s = net.connect(port, '127.0.0.1')
  sockets.push(s)
  let received = ''
  s.on('data', (d) => (received += d))
  s.on('error', () => undefined)
  await once(s, 'connect')
  if (bytes) s.write(bytes)
  // Not once(s, 'close'): a connection closed by a reset emits 'error' first, which once() would throw.
  const ended = new Promise<{ afterMs: number; received: string }>((resolve) => s.on('close', () => resolve({ afterMs: Date.now() - started, received })))
  return { socket: s, ended }
}

/** What `ended` gives, or a failure naming the connection still open after `ms`. */
const within = <T>(ms: number, ended: Promise<T>): Promise<T> =>
  Promise.race([ended, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`the connection was still open after ${ms} ms`)), ms))])

/** The reviewer's request: the headers of a POST /v1/tx/build with a 65,000-byte body, and all of it but the last byte. */
const body = '{"note":"' + 'x'.repeat(65000 - 11) + '"}'
const slowBuild = `POST /v1/tx/build HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n` + body.slice(0, -1)

const expect408 = (received: string) => {
  const [head, json] = received.split('\r\n\r\n') as [string, string]
  expect(head.split('\r\n')[0]).toBe('HTTP/1.1 408 Request Timeout')
  expect(head).toMatch(/\r\nx-service-version: 0\.1\.0\r\n/i)
  expect(JSON.parse(json)).toEqual({ statusCode: 408, error: 'Request Timeout', message: 'the request did not arrive in time' })
}

describe('slow clients', () => {
  it('the gateway runs with the default bounds unless told otherwise', async () => {
    gw = await makeTestGateway()
    expect(gw.app.server.headersTimeout).toBe(DEFAULT_CONNECTION_LIMITS.headersTimeoutMs)
    expect(gw.app.server.requestTimeout).toBe(DEFAULT_CONNECTION_LIMITS.requestTimeoutMs)
    expect(connectionLimitsOf(gw.app.server)).toEqual(DEFAULT_CONNECTION_LIMITS)
    // fastify's own default, 0, turns Node's request timeout off: a slow body then lives forever.
    expect(DEFAULT_CONNECTION_LIMITS.requestTimeoutMs).toBeGreaterThan(0)
  })

  it('a body that stops one byte short is answered 408 in the spec shape and its connection closed, within the request timeout', async () => {
    const port = await listening()
    const { ended } = await silentAfter(port, slowBuild)
    const { afterMs, received } = await within(LIMITS.requestTimeoutMs + 3000, ended)
    expect(afterMs).toBeGreaterThanOrEqual(LIMITS.requestTimeoutMs - 100)
    expect(afterMs).toBeLessThan(LIMITS.requestTimeoutMs + 1500)
    expect408(received)
  })

  it('headers that never end, and a connection that sends nothing, are closed within the headers timeout', async () => {
    const port = await listening()
    const partial = await silentAfter(port, 'GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ')
    const nothing = await silentAfter(port, '')
    for (const { ended } of [partial, nothing]) {
      const { afterMs, received } = await within(LIMITS.headersTimeoutMs + 3000, ended)
      expect(afterMs).toBeLessThan(LIMITS.headersTimeoutMs + 1500)
      expect408(received)
    }
  })

  it('a connection beyond the limit, while every held one is still within its first second of sending, is answered 503 too_many_connections and closed; once the slow ones are cut, new ones are served', async () => {
    const port = await listening()
    const held = await Promise.all(Array.from({ length: LIMITS.maxConnections }, () => silentAfter(port, slowBuild)))
    const extra = await silentAfter(port, 'GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
    const refused = await within(2000, extra.ended)
    expect(refused.afterMs).toBeLessThan(1500)
    const [head, json] = refused.received.split('\r\n\r\n') as [string, string]
    expect(head.split('\r\n')[0]).toBe('HTTP/1.1 503 Service Unavailable')
    expect(head).toMatch(/\r\nretry-after: 1\r\n/i)
    expect(JSON.parse(json)).toEqual({ error: 'too_many_connections', message: `the service holds ${LIMITS.maxConnections} connections already; retry shortly` })
    // fetch (undici) gets the answer too, rather than waiting forever on a connection closed unanswered.
    const viaFetch = await Promise.race([fetch(`http://127.0.0.1:${port}/v1/health`).then((r) => r.status, (e: Error) => e.message), new Promise((r) => setTimeout(() => r('still waiting after 3 s'), 3000))])
    expect(viaFetch).toBe(503)
    await within(LIMITS.requestTimeoutMs + 3000, Promise.all(held.map((h) => h.ended)))
    const res = await fetch(`http://127.0.0.1:${port}/v1/health`)
    expect(res.status).toBe(200)
  })

  it('an approve-request that waits for its operator longer than the request timeout still gets its decision', async () => {
    const hash = `0x${'00'.repeat(32)}`
    const TOKEN = '6f1c3d52-8a4e-4b7f-9d0e-2c5a1b3e4f60'
    const decidedAfterMs = LIMITS.requestTimeoutMs + 2500
    let asked = 0
    const port = await listening({
      policy: { requireApprovalAbove: { valueWei: '1' } },
      preflight: (audit) => async (intent) => ({
        findings: { ...noPreflight(), simulationSuccess: true, gasEstimate: '21000' },
        recorded: audit.append({ intentId: intent.id, event: 'preflight_completed', data: { simulationSuccess: true } }),
      }),
      approver: async (method) => {
        if (method === approverMethods.requestApproval) {
          asked = Date.now()
          return { state: 'pending', requestId: 'r-1', txRequestHash: hash, expiresAt: Date.now() + 300_000 }
        }
        if (Date.now() - asked < decidedAfterMs) return { cursor: 'c0', reset: false, outcomes: [] }
        return { cursor: 'c1', reset: false, outcomes: [{ approved: true, requestId: 'r-1', txRequestHash: hash, approvalTokenId: TOKEN }] }
      },
    })
    const started = Date.now()
    const res = await fetch(`http://127.0.0.1:${port}/v1/tx/approve-request`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(makeIntent({ action: actions.native(), nowMs: gw!.clock() })),
    })
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ approved: true, approvalTokenId: TOKEN })
    expect(Date.now() - started).toBeGreaterThanOrEqual(decidedAfterMs)
  })

  it('feeds that never sign in make room for API clients once a second old; a signed-in feed is never closed for room', async () => {
    // Found by review: upgraded connections were never let go, so anyone
    // could hold every connection with feeds that never send a token (each
    // for the approver's 5 s wait plus 30 s of an unanswered closing
    // handshake), reconnect, and keep every API client out with 503s.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'cs-feed-'))
    const approverSocket = path.join(dir, 'approver-http.sock')
    // As the approver does: the 101, then nothing until the feed's first message is a token.
    const approver = net.createServer((s) => {
      s.once('data', () => {
        s.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n')
        s.once('data', (d) => String(d) === 'auth' && s.write('snapshot'))
      })
      s.on('error', () => undefined)
    })
    servers.push(approver)
    await new Promise<void>((resolve) => approver.listen(approverSocket, resolve))
    const port = await listening({ approverHttpSocket: approverSocket })
    const upgrade = 'GET /v1/approvals/ws HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n'
    const health = 'GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'
    /** A connection that sends `bytes`, with all it has received so far. */
    const open = async (bytes: string) => {
      const s = net.connect(port, '127.0.0.1')
      sockets.push(s)
      const conn = { socket: s, received: '', closed: false }
      s.on('data', (d) => (conn.received += d))
      s.on('error', () => undefined)
      s.on('close', () => (conn.closed = true))
      await once(s, 'connect')
      s.write(bytes)
      return conn
    }
    const until = async (what: string, done: () => boolean) => {
      for (let waited = 0; !done(); waited += 20) {
        if (waited > 3000) throw new Error(`still not ${what} after 3 s`)
        await new Promise((r) => setTimeout(r, 20))
      }
    }
    const feeds: Awaited<ReturnType<typeof open>>[] = []
    for (let i = 0; i < LIMITS.maxConnections; i++) feeds.push(await open(upgrade))
    await until('upgraded', () => feeds.every((f) => f.received.startsWith('HTTP/1.1 101 ')))
    const signedIn = feeds[0]!
    signedIn.socket.write('auth')
    await until('signed in', () => signedIn.received.endsWith('snapshot'))
    await new Promise((r) => setTimeout(r, 1100))

    // The limit is reached: each API client takes the place of a feed that never signed in, oldest first.
    const clients = await Promise.all(Array.from({ length: LIMITS.maxConnections - 1 }, () => open(health)))
    await until('answered', () => clients.every((c) => c.received.includes('\r\n\r\n')))
    expect(clients.map((c) => c.received.split('\r\n')[0])).toEqual(clients.map(() => 'HTTP/1.1 200 OK'))
    // Left: the signed-in feed and the clients, within their first second. One more is refused, and the feed stays.
    const extra = await open(health)
    await until('refused', () => extra.closed)
    expect(extra.received.split('\r\n')[0]).toBe('HTTP/1.1 503 Service Unavailable')
    await until('closed', () => feeds.slice(1).every((f) => f.closed))
    expect(signedIn.socket.destroyed).toBe(false)
  })

  it('the dashboard feed, once upgraded, stays open past the request timeout', async () => {
    // An approver HTTP socket that completes any upgrade and then echoes.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'cs-feed-'))
    const approverSocket = path.join(dir, 'approver-http.sock')
    const approver = net.createServer((s) => {
      s.once('data', () => {
        s.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n')
        s.on('data', (d) => s.write(d))
      })
      s.on('error', () => undefined)
    })
    servers.push(approver)
    await new Promise<void>((resolve) => approver.listen(approverSocket, resolve))
    const port = await listening({ approverHttpSocket: approverSocket })
    const feed = net.connect(port, '127.0.0.1')
    sockets.push(feed)
    await once(feed, 'connect')
    let received = ''
    feed.on('data', (d) => (received += d))
    feed.write('GET /v1/approvals/ws HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n')
    await new Promise((r) => setTimeout(r, LIMITS.requestTimeoutMs + 2000))
    expect(feed.destroyed).toBe(false)
    expect(received).toMatch(/^HTTP\/1\.1 101 /)
    feed.write('still here')
    await new Promise((r) => setTimeout(r, 200))
    expect(received.endsWith('still here')).toBe(true)
  })
})
