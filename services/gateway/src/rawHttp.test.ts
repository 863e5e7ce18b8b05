// The gateway on a real TCP socket, fed bytes no HTTP client library would
// send: what Node's parser and fastify's router answer before any route runs
// must still carry X-Service-Version and the spec's error shapes, and the Host
// guard must refuse every Host header that is not a plain loopback host[:port].
import net from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makeTestGateway } from './app.testkit.js'

let gw: Awaited<ReturnType<typeof makeTestGateway>>
let port: number

beforeAll(async () => {
  gw = await makeTestGateway()
  await gw.app.listen({ host: '127.0.0.1', port: 0 })
  port = (gw.app.server.address() as net.AddressInfo).port
})
afterAll(async () => {
  await gw?.close()
})

interface RawResponse {
  status: number
  headers: Record<string, string>
  body: string
}

/** Writes `bytes` on a fresh connection and parses the one response the server sends before closing. */
function rawRequest(bytes: string | Buffer): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1')
    const chunks: Buffer[] = []
    socket.on('data', (d) => chunks.push(d))
    socket.on('error', reject)
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1')
      const end = text.indexOf('\r\n\r\n')
      if (end === -1) return reject(new Error(`no complete response: ${JSON.stringify(text.slice(0, 200))}`))
      const [statusLine, ...lines] = text.slice(0, end).split('\r\n')
      const headers: Record<string, string> = {}
      for (const line of lines) {
        const colon = line.indexOf(':')
        headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim()
      }
      resolve({ status: Number(statusLine!.split(' ')[1]), headers, body: text.slice(end + 4) })
    })
    socket.write(bytes)
    // Half-close: a complete request gets its answer; a broken one has nothing more coming.
    socket.end()
  })
}

const get = (path: string, host: string | null) =>
  rawRequest(`GET ${path} HTTP/1.1\r\n${host === null ? '' : `Host: ${host}\r\n`}Connection: close\r\n\r\n`)

describe('parser-level and router-level errors', () => {
  it('a malformed request line is a 400 in the validation shape with X-Service-Version', async () => {
    for (const line of ['GARBAGE\r\n\r\n', 'GET /v1/health HTTP/9\r\n\r\n', 'G@T /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n']) {
      const res = await rawRequest(line)
      expect(res.status, line).toBe(400)
      expect(res.headers['x-service-version'], line).toBe('0.1.0')
      expect(res.headers['x-content-type-options'], line).toBe('nosniff')
      expect(res.headers['content-type']).toContain('application/json')
      const body = JSON.parse(res.body)
      expect(Object.keys(body).sort()).toEqual(['error', 'message', 'statusCode'])
      expect(body).toMatchObject({ statusCode: 400, error: 'Bad Request', message: expect.stringContaining('not valid HTTP/1.1') })
    }
  })

  it('a path segment longer than the router accepts is a 414 with X-Service-Version', async () => {
    const res = await get(`/v1/tx/0x${'a'.repeat(300)}`, '127.0.0.1')
    expect(res.status).toBe(414)
    expect(res.headers['x-service-version']).toBe('0.1.0')
    expect(res.headers['x-content-type-options']).toBe('nosniff')
    expect(JSON.parse(res.body)).toEqual({ statusCode: 414, error: 'URI Too Long', message: 'a path segment of the URL is longer than the server accepts' })
  })

  it('a request line or headers past Node’s limit are a 431 with X-Service-Version', async () => {
    for (const request of [
      `GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`,
      `GET /v1/${'a'.repeat(20_000)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`,
    ]) {
      const res = await rawRequest(request)
      expect(res.status).toBe(431)
      expect(res.headers['x-service-version']).toBe('0.1.0')
      expect(res.headers['x-content-type-options']).toBe('nosniff')
      expect(JSON.parse(res.body)).toEqual({ statusCode: 431, error: 'Request Header Fields Too Large', message: 'the request line and headers are larger than the server accepts' })
    }
  })

  it('a URL that is not valid percent-encoding is a 400 with X-Service-Version', async () => {
    const res = await get('/v1/tx/%zz', '127.0.0.1')
    expect(res.status).toBe(400)
    expect(res.headers['x-service-version']).toBe('0.1.0')
    expect(res.headers['x-content-type-options']).toBe('nosniff')
    expect(JSON.parse(res.body)).toMatchObject({ statusCode: 400, error: 'Bad Request' })
  })

  it('an Expect header other than 100-continue is a 417 in the spec shape with X-Service-Version, on any route', async () => {
    // Found by review: Node's own 417 had no body and no version header.
    for (const path of ['/v1/health', '/v1/nope']) {
      const res = await rawRequest(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 200-ok\r\nConnection: close\r\n\r\n`)
      expect(res.status).toBe(417)
      expect(res.headers['x-service-version']).toBe('0.1.0')
      expect(res.headers['x-content-type-options']).toBe('nosniff')
      expect(res.headers['content-type']).toContain('application/json')
      expect(JSON.parse(res.body)).toEqual({ statusCode: 417, error: 'Expectation Failed', message: expect.stringContaining('only 100-continue is supported') })
    }
    // 100-continue is still honoured: the interim answer, then the route's.
    const health = await rawRequest('GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n')
    expect(health.status).toBe(100)
    expect(health.body).toMatch(/^HTTP\/1\.1 200 OK\r\n/)
  })

  it('404 and 413 carry X-Service-Version on the wire too', async () => {
    const missing = await get('/v1/nope', '127.0.0.1')
    expect(missing.status).toBe(404)
    expect(missing.headers['x-service-version']).toBe('0.1.0')
    expect(missing.headers['x-content-type-options']).toBe('nosniff')
    const body = '{"a":"' + 'x'.repeat(70 * 1024) + '"}'
    const large = await rawRequest(
      `POST /v1/tx/build HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
    )
    expect(large.status).toBe(413)
    expect(large.headers['x-service-version']).toBe('0.1.0')
    expect(large.headers['x-content-type-options']).toBe('nosniff')
  })
})

describe('the Host guard parses host[:port] strictly', () => {
  it.each(['127.0.0.1:3100@evil.com', '[::1]evil.com'])('a WebSocket upgrade with Host %j is refused like the plain request (403 host_not_allowed), with X-Service-Version', async (host) => {
    const res = await rawRequest(
      `GET /v1/approvals/ws HTTP/1.1\r\nHost: ${host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`,
    )
    expect(res.status).toBe(403)
    expect(JSON.parse(res.body)).toEqual({ error: 'host_not_allowed', message: `Host header "${host}" is not allowed; use localhost or 127.0.0.1` })
    expect(res.headers['x-service-version']).toBe('0.1.0')
    expect(res.headers['x-content-type-options']).toBe('nosniff')
  })

  it.each([
    '127.0.0.1:3100@evil.com',
    '[::1]evil.com',
    'evil.com',
    'localhost:3100:3100',
    'localhost:',
    'localhost:99999',
    'localhost:31a',
    '127.0.0.1 evil.com',
    'localhost.',
    '[::1',
    '[::1]:',
    '[localhost]',
    'user@localhost',
    '127.0.0.1%2f@evil.com',
    '',
  ])('Host %j is a 403 with X-Service-Version', async (host) => {
    const res = await get('/v1/health', host)
    expect(res.status).toBe(403)
    expect(res.headers['x-service-version']).toBe('0.1.0')
    expect(res.headers['x-content-type-options']).toBe('nosniff')
    expect(JSON.parse(res.body)).toMatchObject({ error: 'host_not_allowed' })
  })

  it('no Host header at all is a 403 from the guard (not a bare 400 from Node)', async () => {
    const res = await get('/v1/health', null)
    expect(res.status).toBe(403)
    expect(res.headers['x-service-version']).toBe('0.1.0')
    expect(res.headers['x-content-type-options']).toBe('nosniff')
  })

  it.each(['127.0.0.1', '127.0.0.1:3100', 'localhost', 'LocalHost:3100', '[::1]', '[::1]:3100'])('Host %j is served', async (host) => {
    const res = await get('/v1/health', host)
    expect(res.status).toBe(200)
    expect(res.headers['x-service-version']).toBe('0.1.0')
    expect(res.headers['x-content-type-options']).toBe('nosniff')
  })
})
