import type { IncomingMessage } from 'node:http'
import { describe, expect, it } from 'vitest'
import { headWithoutUpgrade, offersWebSocket } from './upgradeOffers.js'

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
