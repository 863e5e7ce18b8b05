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
})
