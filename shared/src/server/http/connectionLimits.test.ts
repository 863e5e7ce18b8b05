// The connection limit under attack, on real sockets: a newcomer at the
// limit takes the place of an idle or dribbling connection, never of one
// whose request awaits its answer or one that was upgraded.
import { createServer, get, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import net, { type AddressInfo } from 'node:net'
import { once } from 'node:events'
import { afterEach, describe, expect, it } from 'vitest'
import { applyConnectionLimits, EVICTION_GRACE_MS } from './connectionLimits.js'
import { answerClientError } from './lowLevelErrors.js'
import { upgradeOnlyWebSockets } from './upgradeOffers.js'

const MAX = 8
// Node's own timeouts, far beyond any test here: what cuts a connection below is the limit alone.
const LIMITS = { headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, maxConnections: MAX }

const cleanups: (() => void | Promise<void>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/**
 * A server as the services set one up: the limit, the clientError handler
 * that answers 408 in the spec shape, and upgrades kept for a WebSocket to
 * /feed (answered 101 and then echoed). GET /slow is answered only when the
 * test calls `answerSlow`; every other request once its body has arrived.
 */
async function startServer() {
  const waiting: ServerResponse[] = []
  const warnings: string[] = []
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume()
    req.on('end', () => {
      if (req.url === '/slow') waiting.push(res)
      else res.end('ok')
    })
  })
  server.on('clientError', (err: Error, socket: net.Socket) => answerClientError(err, socket))
  applyConnectionLimits(server, LIMITS, (m) => warnings.push(m))
  server.on('upgrade', (_req: IncomingMessage, socket: net.Socket) => {
    socket.on('error', () => socket.destroy())
    socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n')
    socket.on('data', (d) => socket.write(d))
    // Node's HTTP server sockets allow half-open, and an upgraded one no longer has Node's own 'end' handling.
    socket.on('end', () => socket.end())
  })
  upgradeOnlyWebSockets(server, ['/feed'])
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  cleanups.push(async () => {
    server.closeAllConnections()
    await new Promise((r) => server.close(r))
  })
  const answerSlow = () => {
    for (const res of waiting.splice(0)) res.end('slow ok')
  }
  return { port: (server.address() as AddressInfo).port, warnings, answerSlow, waiting }
}

interface RawConnection {
  socket: net.Socket
  received: () => string
  closed: Promise<void>
  isClosed: () => boolean
}

/** A connection that writes `bytes` (if any) and then what it is told to. */
async function connect(port: number, bytes = ''): Promise<RawConnection> {
  const socket = net.connect(port, '127.0.0.1')
  let received = ''
  let isClosed = false
  socket.on('data', (d) => (received += d))
  socket.on('error', () => undefined)
  const closed = new Promise<void>((r) => socket.on('close', () => ((isClosed = true), r())))
  cleanups.push(() => void socket.destroy())
  await once(socket, 'connect')
  if (bytes) socket.write(bytes)
  return { socket, received: () => received, closed, isClosed: () => isClosed }
}

/** The slowloris: a request line and headers sent one byte every 100 ms, never finished. */
async function dribbler(port: number): Promise<RawConnection> {
  const conn = await connect(port)
  const head = 'GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: ' + 'a'.repeat(10_000)
  let sent = 0
  const timer = setInterval(() => {
    if (conn.isClosed() || sent >= head.length) return clearInterval(timer)
    conn.socket.write(head[sent++]!)
  }, 100)
  cleanups.push(() => clearInterval(timer))
  return conn
}

/** A real client's whole request on a connection of its own: the status and body. */
function request(port: number, path = '/v1/health'): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let body = ''
      res.on('data', (d) => (body += d))
      res.on('end', () => resolve({ status: res.statusCode!, body }))
    }).on('error', reject)
  })
}

const statusLine = (received: string) => received.split('\r\n')[0]
const answersOn = (conn: RawConnection) => conn.received().split('HTTP/1.1 200 OK').length - 1

describe('a newcomer at the connection limit', () => {
  it('is served although every slot is held by a connection dribbling its headers (slowloris at the limit; it was answered 503 too_many_connections)', async () => {
    const { port, warnings } = await startServer()
    const attackers: RawConnection[] = []
    for (let i = 0; i < MAX; i++) attackers.push(await dribbler(port))
    await sleep(EVICTION_GRACE_MS + 200)
    expect((await request(port)).status).toBe(200)
    // The oldest dribbler made room, told why; the others still dribble.
    await attackers[0]!.closed
    expect(statusLine(attackers[0]!.received())).toBe('HTTP/1.1 408 Request Timeout')
    expect(attackers.slice(1).map((a) => a.isClosed())).toEqual(Array(MAX - 1).fill(false))
    // fetch (undici) too.
    expect((await fetch(`http://127.0.0.1:${port}/v1/health`)).status).toBe(200)
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatch(/^8 connections are open \(the connection limit\): 1 closed to make room for new ones .*, 0 refused with 503/)
  })

  it('is answered 503 while the dribblers are within their first second: an honest client on a slow network is not cut at once', async () => {
    const { port } = await startServer()
    const attackers: RawConnection[] = []
    for (let i = 0; i < MAX; i++) attackers.push(await dribbler(port))
    const refused = await request(port)
    expect(refused.status).toBe(503)
    expect(JSON.parse(refused.body)).toMatchObject({ error: 'too_many_connections' })
    expect(attackers.some((a) => a.isClosed())).toBe(false)
  })

  it('takes the place of an idle keep-alive connection before that of any dribbler, even an older one', async () => {
    const { port } = await startServer()
    const attackers: RawConnection[] = []
    for (let i = 0; i < MAX - 1; i++) attackers.push(await dribbler(port))
    await sleep(EVICTION_GRACE_MS + 200)
    const keptAlive = await connect(port, 'GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
    while (!keptAlive.received().endsWith('ok')) await sleep(10)
    await sleep(EVICTION_GRACE_MS + 200)
    expect((await request(port)).status).toBe(200)
    await keptAlive.closed
    // Closed as its keep-alive timeout would have closed it: no second answer.
    expect(keptAlive.received().split('HTTP/1.1 ').length - 1).toBe(1)
    expect(attackers.some((a) => a.isClosed())).toBe(false)
  })

  it('is answered 503 rather than close a keep-alive connection answered less than a second ago: its client is the likeliest to send again', async () => {
    const { port, waiting } = await startServer()
    for (let i = 0; i < MAX - 1; i++) await connect(port, 'GET /slow HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
    while (waiting.length < MAX - 1) await sleep(10)
    const keptAlive = await connect(port, 'GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
    while (!keptAlive.received().endsWith('ok')) await sleep(10)
    expect((await request(port)).status).toBe(503)
    keptAlive.socket.write('GET /again HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
    while (answersOn(keptAlive) < 2 && !keptAlive.isClosed()) await sleep(10)
    expect(keptAlive.isClosed()).toBe(false)
    expect(answersOn(keptAlive)).toBe(2)
  })

  it('reads a request that reached an idle keep-alive connection in the same turn as the newcomer before judging it idle (it was reset unread: ECONNRESET on a request the server never saw)', async () => {
    const { port, waiting } = await startServer()
    for (let i = 0; i < MAX - 1; i++) await connect(port, 'GET /slow HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
    while (waiting.length < MAX - 1) await sleep(10)
    const keptAlive = await connect(port, 'GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
    while (!keptAlive.received().endsWith('ok')) await sleep(10)
    await sleep(EVICTION_GRACE_MS + 200)
    // The newcomer's handshake completes in the kernel first, then the kept-alive client's next request arrives; the
    // server's event loop is held meanwhile, so both wait for the same poll (the newcomer's accept first in line).
    const newcomer = net.connect(port, '127.0.0.1')
    let newcomerGot = ''
    newcomer.on('data', (d) => (newcomerGot += d))
    newcomer.on('error', () => undefined)
    cleanups.push(() => void newcomer.destroy())
    const newcomerClosed = once(newcomer, 'close')
    await new Promise<void>((resolve) =>
      // After net.connect's own nextTick, which makes the connect() call.
      process.nextTick(() => {
        keptAlive.socket.write('POST /sign HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}')
        const until = performance.now() + 50
        while (performance.now() < until);
        resolve()
      }),
    )
    while (answersOn(keptAlive) < 2 && !keptAlive.isClosed()) await sleep(10)
    expect(keptAlive.isClosed()).toBe(false)
    expect(answersOn(keptAlive)).toBe(2)
    // It had just been answered: nothing could go, so the newcomer was refused.
    await newcomerClosed
    expect(statusLine(newcomerGot)).toBe('HTTP/1.1 503 Service Unavailable')
  })

  it('takes the place of a body arriving too slowly, also on a connection replayed without its "Upgrade: h2c" offer', async () => {
    const { port, answerSlow, waiting } = await startServer()
    const slowBody = (upgrade: string) => `POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\n${upgrade}Content-Length: 1000\r\n\r\n` + 'x'.repeat(10)
    const attackers: RawConnection[] = []
    for (let i = 0; i < MAX / 2; i++) attackers.push(await connect(port, slowBody('')))
    for (let i = 0; i < MAX / 2; i++) attackers.push(await connect(port, slowBody('Connection: Upgrade\r\nUpgrade: h2c\r\n')))
    await sleep(EVICTION_GRACE_MS + 200)
    // Real clients that each keep their slot (their answers wait) until every slow body has made room.
    const answers = Array.from({ length: MAX }, () => request(port, '/slow'))
    await Promise.all(attackers.map((a) => a.closed))
    expect(attackers.map((a) => statusLine(a.received()))).toEqual(Array(MAX).fill('HTTP/1.1 408 Request Timeout'))
    while (waiting.length < MAX) await sleep(10)
    answerSlow()
    expect((await Promise.all(answers)).map((a) => a.status)).toEqual(Array(MAX).fill(200))
  })

  it('is refused 503 when every slot holds a request that has arrived and awaits its answer, and every one of those is answered', async () => {
    const { port, warnings, answerSlow, waiting } = await startServer()
    const waiters: RawConnection[] = []
    for (let i = 0; i < MAX; i++) waiters.push(await connect(port, 'GET /slow HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'))
    while (waiting.length < MAX) await sleep(10)
    await sleep(EVICTION_GRACE_MS + 200)
    const refused = await request(port)
    expect(refused.status).toBe(503)
    expect(JSON.parse(refused.body)).toEqual({ error: 'too_many_connections', message: `the service holds ${MAX} connections already; retry shortly` })
    expect(warnings[0]).toMatch(/: 0 closed to make room .*, 1 refused with 503/)
    answerSlow()
    for (const w of waiters) {
      while (!w.received().endsWith('slow ok')) await sleep(10)
      expect(statusLine(w.received())).toBe('HTTP/1.1 200 OK')
    }
  })

  it('is refused 503 when every slot holds an upgraded WebSocket, and each stays open and in use', async () => {
    const { port } = await startServer()
    const feeds: RawConnection[] = []
    for (let i = 0; i < MAX; i++) {
      feeds.push(await connect(port, 'GET /feed HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n'))
    }
    for (const f of feeds) while (!f.received().includes('\r\n\r\n')) await sleep(10)
    await sleep(EVICTION_GRACE_MS + 200)
    expect((await request(port)).status).toBe(503)
    for (const f of feeds) {
      expect(statusLine(f.received())).toBe('HTTP/1.1 101 Switching Protocols')
      f.socket.write('still here')
      while (!f.received().endsWith('still here')) await sleep(10)
    }
    expect(feeds.some((f) => f.isClosed())).toBe(false)
  })
})
