import { createServer, type IncomingMessage } from 'node:http'
import net from 'node:net'
import type { AddressInfo } from 'node:net'
import { describe, expect, it } from 'vitest'
import { headWithoutUpgrade, offersWebSocket, upgradeOnlyWebSockets } from './upgradeOffers.js'

const request = (rawHeaders: string[], method = 'GET', url = '/v1/health'): IncomingMessage => {
  const headers: Record<string, string> = {}
  for (let i = 0; i < rawHeaders.length; i += 2) headers[rawHeaders[i]!.toLowerCase()] = rawHeaders[i + 1]!
  return { method, url, httpVersion: '1.1', rawHeaders, headers } as unknown as IncomingMessage
}

describe('upgrade offers', () => {
  it('a WebSocket offer is one whose Upgrade lists "websocket", in any case, among others', () => {
    expect(offersWebSocket(request(['Upgrade', 'websocket']))).toBe(true)
    expect(offersWebSocket(request(['Upgrade', 'h2c, WebSocket']))).toBe(true)
    expect(offersWebSocket(request(['Upgrade', 'h2c']))).toBe(false)
    expect(offersWebSocket(request(['Upgrade', 'websocketx']))).toBe(false)
    expect(offersWebSocket(request([]))).toBe(false)
  })

  it('the head is written again without Upgrade and without "upgrade" in Connection; every other header kept as sent, repeats included', () => {
    const head = headWithoutUpgrade(
      request(['Host', '127.0.0.1', 'Connection', 'Upgrade, HTTP2-Settings', 'Upgrade', 'h2c', 'HTTP2-Settings', 'AAMA', 'X-A', '1', 'X-A', '2'], 'POST', '/v1/tx/build?x=1'),
    )
    expect(head).toBe('POST /v1/tx/build?x=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: http2-settings\r\nHTTP2-Settings: AAMA\r\nX-A: 1\r\nX-A: 2\r\n\r\n')
    expect(headWithoutUpgrade(request(['Host', 'localhost', 'connection', 'upgrade', 'upgrade', 'h2c']))).toBe('GET /v1/health HTTP/1.1\r\nHost: localhost\r\n\r\n')
  })
})

describe('a connection whose every request offers an upgrade', () => {
  it('is served one replay deep: 5,000 pipelined "Upgrade: h2c" requests, then one with a body, are all answered (found by review: each wrapped the one before, and about 3,000 overflowed the stack and ended the process)', async () => {
    const server = createServer((req, res) => {
      let body = ''
      req.on('data', (d: Buffer) => (body += d.toString()))
      req.on('end', () => res.end(`${req.method} ${req.url} ${body}`))
    })
    server.on('upgrade', (_req, socket: net.Socket) => socket.destroy())
    upgradeOnlyWebSockets(server, ['/ws'])
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    const N = 5_000
    const offer = 'GET /n HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n'
    const last = 'POST /last HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: h2c\r\nContent-Length: 5\r\n\r\nhello'
    const s = net.connect((server.address() as AddressInfo).port, '127.0.0.1')
    let received = ''
    s.on('data', (d: Buffer) => (received += d.toString()))
    s.on('error', () => undefined)
    try {
      await new Promise((r) => s.once('connect', r))
      for (let i = 0; i < N; i++) {
        s.write(offer)
        if (i % 50 === 0) await new Promise((r) => setTimeout(r, 1))
      }
      s.write(last)
      for (let i = 0; i < 600 && !received.includes('POST /last hello'); i++) await new Promise((r) => setTimeout(r, 50))
      expect(received.split('HTTP/1.1 200 OK').length - 1).toBe(N + 1)
      expect(received).toContain('POST /last hello')
    } finally {
      s.destroy()
      server.closeAllConnections()
      await new Promise((r) => server.close(r))
    }
  }, 60_000)
})
