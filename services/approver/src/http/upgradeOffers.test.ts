// Requests with an upgrade offer other than the feed's WebSocket, and
// CONNECT, on the approver's port and on the HTTP socket the gateway
// forwards to: served as plain HTTP/1.1, or answered, never a failed
// WebSocket handshake or a dropped connection.
import { once } from 'node:events'
import type net from 'node:net'
import WebSocket from 'ws'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { rawExchange, type RawAnswer } from '@countersign/shared/testing/rawExchange'
import { OPERATOR_TOKEN as TOKEN, startListeningApprover, type ListeningApprover } from './listeningApprover.testkit.js'

let approver: ListeningApprover
let port: number
let socketPath: string

beforeAll(async () => {
  approver = await startListeningApprover()
  port = approver.port
  socketPath = approver.socketPath
})
afterAll(async () => {
  await approver?.close()
})

const h2c = 'Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n'
const shown = (a: RawAnswer) => ({ status: a.statusLine, type: a.headers['content-type'], version: a.headers['x-service-version'], body: a.body })

describe.each([
  ['its TCP port', () => port],
  ['the HTTP socket the gateway forwards to', () => socketPath],
])('the approver, on %s', (_where, to) => {
  it('GET /v1/approvals/pending with "Upgrade: h2c" (curl --http2) is answered as without it, not as a failed WebSocket handshake', async () => {
    const plain = await rawExchange(to(), 'GET /v1/approvals/pending HTTP/1.1\r\nHost: localhost\r\n\r\n')
    expect(plain.answers[0]!.statusLine).toBe('HTTP/1.1 200 OK')
    const offered = await rawExchange(to(), `GET /v1/approvals/pending HTTP/1.1\r\nHost: localhost\r\n${h2c}\r\n`)
    expect(offered.answers.map(shown)).toEqual(plain.answers.map(shown))
  })

  it('a decide with a body and an h2c offer has its body read and is answered as without the offer', async () => {
    const body = JSON.stringify({ approved: true })
    const decide = (extra: string) =>
      `POST /v1/approvals/${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}/decide HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n${extra}\r\n${body}`
    const plain = await rawExchange(to(), decide(''))
    expect(plain.answers[0]!.statusLine).toBe('HTTP/1.1 404 Not Found')
    const offered = await rawExchange(to(), decide(h2c))
    expect(offered.answers.map(shown)).toEqual(plain.answers.map(shown))
  })

  it('CONNECT is answered 405 in the spec shape, not dropped without a word', async () => {
    const res = await rawExchange(to(), 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n')
    expect(res.answers.map(shown)).toEqual([
      { status: 'HTTP/1.1 405 Method Not Allowed', type: 'application/json; charset=utf-8', version: '0.1.0', body: JSON.stringify({ statusCode: 405, error: 'Method Not Allowed', message: 'CONNECT is not supported: this service is not a proxy' }) },
    ])
    expect(res.answers[0]!.headers.allow).toBe('GET, HEAD, POST')
  })
})

it('the feed still upgrades and signs in', async () => {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/v1/approvals/ws`)
  const first = new Promise<string>((resolve) => ws.once('message', (d) => resolve(String(d))))
  await once(ws, 'open')
  ws.send(JSON.stringify({ type: 'auth', token: TOKEN }))
  expect(JSON.parse(await first)).toMatchObject({ type: 'pending' })
  ws.close()
})
