// The approver's HTTP side in-process: pending, decide with the operator
// token, the dashboard, and the WebSocket feed's Origin check and token.
import { randomUUID } from 'node:crypto'
import { once } from 'node:events'
import net from 'node:net'
import { mkdtempSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import WebSocket from 'ws'
import { afterEach, describe, expect, it } from 'vitest'
import { defaultRouterTable, noPreflight, openAuditLog, type AuditLog } from '@countersign/shared'
import { actions, makeIntent } from '@countersign/shared/testing/intents'
import { createApprovalService } from '../approvalService.js'
import { webChannel } from '../channels/webChannel.js'
import { PendingRequests } from '../requests/pendingRequests.js'
import { insertRawAuditRow } from '@countersign/shared/testing/auditTamper'
import { buildApproverApp, WS_INTERNAL_ERROR, WS_UNAUTHORISED } from './app.js'

const TOKEN = 'operator-secret-operator-secret-1234'
let audit: AuditLog | undefined
const closers: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const c of closers.splice(0)) await c()
  await audit?.close()
  audit = undefined
})

async function app(token: string | null = TOKEN, wsAuthTimeoutMs?: number) {
  let now = Date.UTC(2026, 10, 22, 12)
  const clock = () => now
  const auditFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'cs-appr-http-')), 'audit.db')
  audit = openAuditLog(auditFile, { clock })
  const pending = new PendingRequests(clock, { ttlMs: 300_000, perWallet: 5, total: 500 })
  const service = createApprovalService({ mode: 'web', pending, granter: { grant: async () => ({ approvalTokenId: randomUUID(), expiresAt: now + 300_000 }), durable: async () => undefined }, audit, routers: defaultRouterTable(), clock })
  const web = webChannel(clock)
  service.addChannel(web)
  const http = await buildApproverApp({ host: '127.0.0.1', service, web, audit, clock, operatorToken: token, ...(wsAuthTimeoutMs ? { wsAuthTimeoutMs } : {}) })
  closers.push(() => http.close())
  const request = (note?: string) =>
    service.requestApproval({
      intent: makeIntent({ action: actions.native('1000'), nowMs: now, ...(note ? {} : {}) }),
      preflight: { ...noPreflight(), riskScore: 12, riskFactors: [{ id: 'x', weight: 12, detail: 'detail' }] },
      policyReasons: ['value above threshold'],
    })
  return { http, service, web, request, auditFile, advance: (ms: number) => (now += ms) }
}

async function listen(a: Awaited<ReturnType<typeof app>>) {
  await a.http.listen({ host: '127.0.0.1', port: 0 })
  const { port } = a.http.server.address() as { port: number }
  return port
}

/** Opens the feed and records everything: messages, the close code, or the refused handshake's status. */
function feed(port: number, headers: Record<string, string> = {}) {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/v1/approvals/ws`, { headers })
  const messages: Array<{ type: string; [k: string]: unknown }> = []
  ws.on('message', (d) => messages.push(JSON.parse(d.toString())))
  const opened = new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve())
    ws.once('error', reject)
  })
  const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)))
  const refused = new Promise<number>((resolve) => ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0)))
  return { ws, messages, opened, closed, refused }
}

const until = async (check: () => boolean, what: string, ms = 2000) => {
  for (let i = 0; i < ms / 10; i++) {
    if (check()) return
    await new Promise((r) => setTimeout(r, 10))
  }
  throw new Error(`timed out waiting for ${what}`)
}

describe('approver HTTP', () => {
  it('lists pending requests in the spec shape with ttlSeconds', async () => {
    const a = await app()
    const t = await a.request()
    a.advance(10_500)
    const res = await a.http.inject({ method: 'GET', url: '/v1/approvals/pending' })
    expect(res.statusCode).toBe(200)
    const body = res.json()
    expect(body.pending).toHaveLength(1)
    expect(body.pending[0]).toMatchObject({ requestId: t.state === 'pending' ? t.requestId : '', ttlSeconds: 290, summary: { action: expect.any(String), riskScore: 12, warnings: [] } })
  })

  it('decide needs the operator token; without it 401 and the request stays pending', async () => {
    const a = await app()
    const t = await a.request()
    const requestId = t.state === 'pending' ? t.requestId : ''
    const url = `/v1/approvals/${requestId}/decide`
    const none = await a.http.inject({ method: 'POST', url, payload: { approved: true } })
    expect(none.statusCode).toBe(401)
    expect(none.json()).toMatchObject({ error: 'operator_auth_required' })
    const wrong = await a.http.inject({ method: 'POST', url, payload: { approved: true }, headers: { authorization: 'Bearer nope' } })
    expect(wrong.statusCode).toBe(401)
    expect(a.service.pending.list()).toHaveLength(1)
    const ok = await a.http.inject({ method: 'POST', url, payload: { approved: false }, headers: { authorization: `Bearer ${TOKEN}` } })
    expect(ok.statusCode).toBe(200)
    expect(ok.json()).toEqual({ decided: true, requestId, approved: false })
    const again = await a.http.inject({ method: 'POST', url, payload: { approved: true }, headers: { authorization: `Bearer ${TOKEN}` } })
    expect(again.statusCode).toBe(404)
    expect(again.json()).toMatchObject({ error: 'not_found' })
  })

  it('a refused token on decide or the feed is an operator_sign_in_failed row in history; a missing one and the right one are not', async () => {
    const a = await app()
    const port = await listen(a)
    const t = await a.request()
    const url = `/v1/approvals/${t.state === 'pending' ? t.requestId : ''}/decide`
    const failedRows = async () =>
      (await a.http.inject({ method: 'GET', url: '/v1/approvals/history?limit=100' })).json<{ events: Array<{ event: string; data: Record<string, unknown> }> }>().events.filter((e) => e.event === 'operator_sign_in_failed')
    expect((await a.http.inject({ method: 'POST', url, payload: { approved: true } })).statusCode).toBe(401)
    const f = feed(port)
    await f.opened
    f.ws.send(JSON.stringify({ type: 'auth' }))
    expect(await f.closed).toBe(WS_UNAUTHORISED)
    expect(await failedRows()).toEqual([])

    expect((await a.http.inject({ method: 'POST', url, payload: { approved: true }, headers: { authorization: `Bearer ${'x'.repeat(36)}` } })).statusCode).toBe(401)
    expect(a.service.pending.list()).toHaveLength(1)
    let rows = await failedRows()
    for (let i = 0; i < 100 && rows.length === 0; i++) rows = await new Promise((r) => setTimeout(r, 10)).then(failedRows)
    expect(rows).toEqual([expect.objectContaining({ event: 'operator_sign_in_failed', intentId: 'system', data: expect.objectContaining({ count: 1, places: { decide: 1 } }) })])
    // Within the minute: counted, written when the approver closes.
    const g = feed(port)
    await g.opened
    g.ws.send(JSON.stringify({ type: 'auth', token: 'wrong' }))
    expect(await g.closed).toBe(WS_UNAUTHORISED)
    expect((await a.http.inject({ method: 'POST', url, payload: { approved: false }, headers: { authorization: `Bearer ${TOKEN}` } })).statusCode).toBe(200)
    expect(await failedRows()).toHaveLength(1)
    await a.http.close()
    const last = audit!.list({ limit: 100 }).filter((e) => e.event === 'operator_sign_in_failed')
    expect(last.map((e) => e.data)).toEqual([expect.objectContaining({ count: 1, places: { dashboard: 1 } }), expect.objectContaining({ count: 1, places: { decide: 1 } })])
  })

  // Found by fuzzing: the same request id in upper case (Swift's uuidString writes it so) was 404 not_found.
  it('decide takes the request id in either case, and answers with it in lower case', async () => {
    const a = await app()
    const t = await a.request()
    const requestId = t.state === 'pending' ? t.requestId : ''
    const ok = await a.http.inject({ method: 'POST', url: `/v1/approvals/${requestId.toUpperCase()}/decide`, payload: { approved: false }, headers: { authorization: `Bearer ${TOKEN}` } })
    expect(ok.statusCode, ok.body).toBe(200)
    expect(ok.json()).toEqual({ decided: true, requestId, approved: false })
    expect(a.service.pending.list()).toHaveLength(0)
  })

  it.each([[{}], [{ approved: 'yes' }], [{ approved: true, extra: 1 }], [[true]]])('decide with body %j is a 400 in the validation shape', async (payload) => {
    const a = await app()
    const res = await a.http.inject({ method: 'POST', url: `/v1/approvals/${randomUUID()}/decide`, payload: payload as object, headers: { authorization: `Bearer ${TOKEN}` } })
    expect(res.statusCode).toBe(400)
    expect(Object.keys(res.json()).sort()).toEqual(['error', 'message', 'statusCode'])
  })

  it('decide with a text/plain body is 415, as with any other type that is not JSON (found by review: a 400 "body must be object")', async () => {
    const a = await app()
    const url = `/v1/approvals/${randomUUID()}/decide`
    const headers = { authorization: `Bearer ${TOKEN}` }
    const plain = await a.http.inject({ method: 'POST', url, payload: '{"approved":true}', headers: { ...headers, 'content-type': 'text/plain' } })
    const form = await a.http.inject({ method: 'POST', url, payload: 'approved=true', headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' } })
    expect(plain.statusCode).toBe(415)
    expect(plain.json()).toEqual(form.json())
    expect(plain.json()).toEqual({ statusCode: 415, error: 'Unsupported Media Type', message: 'content type not supported; send application/json' })
  })

  it('history clamps limit into 1..100 as the gateway does, Infinity and 1e400 to 100, -Infinity to 1, NaN to the default 20 (found by review: 20 for all of them)', async () => {
    const a = await app()
    for (let n = 0; n < 120; n++) await audit!.append({ intentId: 'system', event: 'skill_revoked', data: { skillName: `s${n}` } })
    const count = async (limit: string) => ((await a.http.inject({ method: 'GET', url: `/v1/approvals/history?limit=${limit}` })).json() as { events: unknown[] }).events.length
    for (const [limit, expected] of [['Infinity', 100], ['1e400', 100], ['-Infinity', 1], ['-1e400', 1], ['NaN', 20], ['', 20], ['7.9', 7], ['0', 1]] as const) {
      expect(await count(limit), limit).toBe(expected)
    }
  })

  it('SERVICE_OPERATOR_AUTH=off restores open decide', async () => {
    const a = await app(null)
    const t = await a.request()
    const res = await a.http.inject({ method: 'POST', url: `/v1/approvals/${t.state === 'pending' ? t.requestId : ''}/decide`, payload: { approved: true } })
    expect(res.statusCode).toBe(200)
  })

  it('serves the dashboard as HTML with a strict CSP', async () => {
    const a = await app()
    const res = await a.http.inject({ method: 'GET', url: '/approval-ui' })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toContain('text/html')
    expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'")
    // Its inline script by hash only: a handler attribute that reached the page would not run.
    expect(res.headers['content-security-policy']).toMatch(/script-src 'sha256-[A-Za-z0-9+/]+=*';/)
    expect(res.headers['content-security-policy']).not.toContain('script-src \'unsafe-inline\'')
    expect(res.body).toContain('Pending requests')
    expect(res.headers['x-service-version']).toBe('0.1.0')
  })
})

describe('the WebSocket feed', () => {
  it('a plain GET (no upgrade) is 426 upgrade_required in the spec shape, as on the gateway', async () => {
    const a = await app()
    const res = await a.http.inject({ method: 'GET', url: '/v1/approvals/ws' })
    expect(res.statusCode).toBe(426)
    expect(res.headers.upgrade).toBe('websocket')
    expect(res.json()).toEqual({ error: 'upgrade_required', message: expect.stringContaining('WebSocket') })
  })

  it('refuses a page from another origin before the upgrade', async () => {
    const a = await app()
    const port = await listen(a)
    await a.request()
    for (const origin of ['http://evil.example', `http://127.0.0.1:${port + 1}`, 'null']) {
      const f = feed(port, { origin })
      expect(await f.refused).toBe(403)
      expect(f.messages).toEqual([])
    }
  })

  it('sends nothing before auth and closes 4401 when no auth message comes in time', async () => {
    const a = await app(TOKEN, 200)
    const port = await listen(a)
    await a.request()
    const f = feed(port, { origin: `http://127.0.0.1:${port}` })
    await f.opened
    expect(await f.closed).toBe(WS_UNAUTHORISED)
    expect(f.messages).toEqual([])
  })

  it('closes 4401 on a wrong token or a first message that is not auth, without sending anything', async () => {
    const a = await app()
    const port = await listen(a)
    await a.request()
    for (const first of [{ type: 'auth', token: 'wrong' }, { type: 'hello' }, 'not json']) {
      const f = feed(port)
      await f.opened
      f.ws.send(typeof first === 'string' ? first : JSON.stringify(first))
      expect(await f.closed).toBe(WS_UNAUTHORISED)
      expect(f.messages).toEqual([])
    }
  })

  it('with the operator token: the pending list and history, then each new and ended request', async () => {
    const a = await app()
    const port = await listen(a)
    const first = await a.request()
    const f = feed(port, { origin: `http://127.0.0.1:${port}` })
    await f.opened
    f.ws.send(JSON.stringify({ type: 'auth', token: TOKEN }))
    await until(() => f.messages.length >= 2, 'the snapshot')
    expect(f.messages[0]).toMatchObject({ type: 'pending', pending: [{ requestId: first.state === 'pending' ? first.requestId : '' }] })
    expect(f.messages[1]).toMatchObject({ type: 'history' })
    const second = await a.request()
    const secondId = second.state === 'pending' ? second.requestId : ''
    await until(() => f.messages.some((m) => m.type === 'request'), 'the new request')
    expect(f.messages.find((m) => m.type === 'request')).toMatchObject({ request: { requestId: secondId, ttlSeconds: 300 } })
    await a.service.decide(secondId, false, 'web')
    await until(() => f.messages.some((m) => m.type === 'ended'), 'the end')
    expect(f.messages.find((m) => m.type === 'ended')).toEqual({ type: 'ended', requestId: secondId, end: 'denied' })
    f.ws.close()
  })

  it('a row inserted into audit.db by hand stops neither the feed nor history: both show it, marked, and go on', async () => {
    const a = await app()
    const port = await listen(a)
    // Nobody watching: the feed still reads the newest row every 250 ms.
    const unwatched = insertRawAuditRow(a.auditFile, { event: 'approval_granted', data: '[]' })
    await new Promise((r) => setTimeout(r, 600))
    const f = feed(port, { origin: `http://127.0.0.1:${port}` })
    await f.opened
    f.ws.send(JSON.stringify({ type: 'auth', token: TOKEN }))
    await until(() => f.messages.length >= 2, 'the snapshot')
    const marked = (seq: number) => ({ intentId: 'system', malformedRow: expect.stringContaining(`audit.db row ${seq} (approval_granted): its data is not a JSON object`) })
    expect(f.messages[1]).toMatchObject({ type: 'history', events: [{ event: 'approval_granted', data: marked(unwatched) }] })
    // Watched: the next one is pushed like any new event, and what follows still arrives.
    const watched = insertRawAuditRow(a.auditFile, { event: 'approval_granted', data: 'not json' })
    await until(() => f.messages.some((m) => m.type === 'audit'), 'the inserted row on the feed')
    expect(f.messages.find((m) => m.type === 'audit')).toMatchObject({ events: [{ event: 'approval_granted', data: marked(watched) }] })
    const next = await a.request()
    await until(() => f.messages.some((m) => m.type === 'request'), 'the next request')
    expect(next.state).toBe('pending')
    const res = await a.http.inject({ method: 'GET', url: '/v1/approvals/history?limit=5' })
    expect(res.statusCode).toBe(200)
    const shown = (res.json() as { events: Array<{ event: string; data: unknown }> }).events.filter((e) => e.event === 'approval_granted')
    expect(shown.map((e) => e.data)).toEqual([marked(watched), marked(unwatched)])
    f.ws.close()
  })

  it('a feed whose snapshot cannot be read (audit.db damaged) is closed with 1011; the approver goes on and the next feed works', async () => {
    const a = await app()
    const port = await listen(a)
    const list = audit!.list
    audit!.list = () => {
      throw new Error('database disk image is malformed')
    }
    try {
      const f = feed(port, { origin: `http://127.0.0.1:${port}` })
      await f.opened
      f.ws.send(JSON.stringify({ type: 'auth', token: TOKEN }))
      expect(await f.closed).toBe(WS_INTERNAL_ERROR)
      expect(f.messages).toEqual([])
    } finally {
      audit!.list = list
    }
    const again = feed(port, { origin: `http://127.0.0.1:${port}` })
    await again.opened
    again.ws.send(JSON.stringify({ type: 'auth', token: TOKEN }))
    await until(() => again.messages.length >= 3, 'the snapshot and who signed in')
    expect(again.messages.map((m) => m.type)).toEqual(['pending', 'history', 'operator'])
    again.ws.close()
  })

  it.each([
    ['a path that is not the feed', 'GET /v1/approvals/pending HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n'],
    ['a foreign Origin', 'GET /v1/approvals/ws HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: http://evil.example\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n'],
    ['a broken handshake', 'GET /v1/approvals/ws HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 99\r\n\r\n'],
  ])('an upgrade with %s from a client that resets the connection at once does not end the approver', async (_what, request) => {
    const a = await app()
    const port = await listen(a)
    for (let i = 0; i < 30; i++) {
      const s = net.connect(port, '127.0.0.1')
      await once(s, 'connect')
      s.write(request)
      s.resetAndDestroy()
      await once(s, 'close')
    }
    await new Promise((r) => setTimeout(r, 50))
    expect((await fetch(`http://127.0.0.1:${port}/v1/approvals/pending`)).status).toBe(200)
  })

  it.each([
    ['no Sec-WebSocket-Key', 'Sec-WebSocket-Version: 13\r\n', 'Missing or invalid Sec-WebSocket-Key header'],
    ['a version it does not speak', 'Sec-WebSocket-Version: 99\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n', 'Missing or invalid Sec-WebSocket-Version header'],
    ['a malformed subprotocol list', 'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: a,,b\r\n', 'Invalid Sec-WebSocket-Protocol header'],
  ])("a feed handshake with %s is answered 400 in the spec's shape, with the version header, not ws's text/html page", async (_what, headers, wsMessage) => {
    const a = await app()
    const port = await listen(a)
    const s = net.connect(port, '127.0.0.1')
    await once(s, 'connect')
    s.write(`GET /v1/approvals/ws HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n${headers}\r\n`)
    let raw = ''
    s.on('data', (d) => (raw += d))
    await once(s, 'close')
    const [head, body] = raw.split('\r\n\r\n') as [string, string]
    expect(head.split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request')
    expect(head).toMatch(/\r\ncontent-type: application\/json; charset=utf-8\r\n/i)
    expect(head).toMatch(/\r\nx-service-version: /i)
    expect(head.includes('Sec-WebSocket-Version: 13, 8')).toBe(wsMessage.includes('Version'))
    expect(JSON.parse(body)).toEqual({ statusCode: 400, error: 'Bad Request', message: `the WebSocket handshake is not valid: ${wsMessage}` })
    expect((await fetch(`http://127.0.0.1:${port}/v1/approvals/pending`)).status).toBe(200)
  })

  // Found by review: ws writes the 101 itself, and it went out without the headers every other answer has.
  it('the feed handshake that succeeds carries the version and nosniff headers too', async () => {
    const a = await app()
    const port = await listen(a)
    const s = net.connect(port, '127.0.0.1')
    await once(s, 'connect')
    s.write(`GET /v1/approvals/ws HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nOrigin: http://127.0.0.1:${port}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`)
    let raw = ''
    s.on('data', (d) => (raw += d))
    await until(() => raw.includes('\r\n\r\n'), 'the handshake answer')
    s.destroy()
    const head = raw.split('\r\n\r\n')[0]!
    expect(head.split('\r\n')[0]).toBe('HTTP/1.1 101 Switching Protocols')
    expect(head).toMatch(/\r\nx-service-version: 0\.1\.0(\r\n|$)/i)
    expect(head).toMatch(/\r\nx-content-type-options: nosniff(\r\n|$)/i)
  })

  it('a burst of audit rows between two polls reaches the feed whole, in order, none skipped', async () => {
    const a = await app()
    const port = await listen(a)
    const f = feed(port, { origin: `http://127.0.0.1:${port}` })
    await f.opened
    f.ws.send(JSON.stringify({ type: 'auth', token: TOKEN }))
    await until(() => f.messages.length >= 3, 'the snapshot')
    // 1,200 rows in one commit: more than one poll's page, far more than the 100 the feed used to look at.
    await Promise.all(Array.from({ length: 1200 }, (_, n) => audit!.append({ intentId: 'burst', event: 'burst_event', data: { n } })))
    const seen = () => f.messages.filter((m) => m.type === 'audit').flatMap((m) => (m.events as Array<{ data: { n: number } }>).map((e) => e.data.n))
    await until(() => seen().length >= 1200, 'every row of the burst', 10_000)
    // Each message is newest first; the messages follow the log.
    const inOrder = f.messages.filter((m) => m.type === 'audit').flatMap((m) => (m.events as Array<{ data: { n: number } }>).map((e) => e.data.n).reverse())
    expect(inOrder).toEqual(Array.from({ length: 1200 }, (_, n) => n))
    f.ws.close()
  })

  it('a feed that stops reading is dropped once 4 MiB wait for it, and the approver keeps no more; a new connection gets a fresh snapshot', async () => {
    const a = await app()
    const port = await listen(a)
    const stuck = feed(port, { origin: `http://127.0.0.1:${port}` })
    await stuck.opened
    stuck.ws.send(JSON.stringify({ type: 'auth', token: TOKEN }))
    await until(() => stuck.messages.length >= 2, 'the snapshot')
    expect(a.web.subscribers).toBe(1)
    stuck.ws.pause()
    // 64 MiB of audit pushes, far more than the socket buffers of both ends hold.
    const events = [{ padding: 'x'.repeat(256 * 1024) }]
    for (let i = 0; i < 256 && a.web.subscribers > 0; i++) {
      a.web.broadcast({ type: 'audit', events })
      await new Promise((r) => setImmediate(r))
    }
    expect(a.web.subscribers).toBe(0)
    const fresh = feed(port, { origin: `http://127.0.0.1:${port}` })
    await fresh.opened
    fresh.ws.send(JSON.stringify({ type: 'auth', token: TOKEN }))
    await until(() => fresh.messages.length >= 2, 'a fresh snapshot')
    expect(fresh.messages.map((m) => m.type).slice(0, 2)).toEqual(['pending', 'history'])
    fresh.ws.close()
    stuck.ws.terminate()
  })

  it('with SERVICE_OPERATOR_AUTH=off the feed opens without a token (but still refuses foreign origins)', async () => {
    const a = await app(null)
    const port = await listen(a)
    const f = feed(port)
    await until(() => f.messages.length >= 2, 'the snapshot')
    expect(f.messages[0]).toMatchObject({ type: 'pending' })
    f.ws.close()
    expect(await feed(port, { origin: 'http://evil.example' }).refused).toBe(403)
  })
})
