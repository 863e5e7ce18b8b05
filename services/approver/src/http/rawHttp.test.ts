// The approver's own port (127.0.0.1:3101) on a real socket: parser-level
// errors and malformed Host headers get the same answers as on the gateway
// (shared/src/server/http/lowLevelErrors.ts, hostGuard.ts), with X-Service-Version.
import { randomUUID } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { defaultRouterTable, openAuditLog, type AuditLog } from '@countersign/shared'
import { createApprovalService } from '../approvalService.js'
import { webChannel } from '../channels/webChannel.js'
import { PendingRequests } from '../requests/pendingRequests.js'
import { buildApproverApp } from './app.js'

let audit: AuditLog
let http: Awaited<ReturnType<typeof buildApproverApp>>
let port: number

beforeAll(async () => {
  const clock = () => Date.UTC(2026, 10, 22, 12)
  audit = openAuditLog(path.join(mkdtempSync(path.join(os.tmpdir(), 'cs-appr-raw-')), 'audit.db'), { clock })
  const pending = new PendingRequests(clock, { ttlMs: 300_000, perWallet: 5, total: 500 })
  const service = createApprovalService({ mode: 'web', pending, granter: { grant: async () => ({ approvalTokenId: randomUUID(), expiresAt: clock() + 300_000 }), durable: async () => undefined }, audit, routers: defaultRouterTable(), clock })
  const web = webChannel(clock)
  service.addChannel(web)
  http = await buildApproverApp({ host: '127.0.0.1', service, web, audit, clock, operatorToken: 'operator-secret-operator-secret-1234' })
  await http.listen({ host: '127.0.0.1', port: 0 })
  port = (http.server.address() as net.AddressInfo).port
})
afterAll(async () => {
  await http?.close()
  await audit?.close()
})

/** One request on a fresh connection; the status line, headers and body of the answer. */
function raw(bytes: string): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1')
    let text = ''
    socket.on('data', (d) => (text += d.toString('latin1')))
    socket.on('error', reject)
    socket.on('close', () => {
      const end = text.indexOf('\r\n\r\n')
      resolve({ status: Number(text.split(' ')[1]), headers: text.slice(0, end).toLowerCase(), body: text.slice(end + 4) })
    })
    socket.end(bytes)
  })
}

describe('the approver on a raw socket', () => {
  it('a malformed request line is a 400 in the validation shape with X-Service-Version', async () => {
    const res = await raw('GARBAGE\r\n\r\n')
    expect(res.status).toBe(400)
    expect(res.headers).toContain('x-service-version: 0.1.0')
    expect(res.headers).toContain('x-content-type-options: nosniff')
    expect(JSON.parse(res.body)).toEqual({ statusCode: 400, error: 'Bad Request', message: 'the request is not valid HTTP/1.1 (HPE_INVALID_METHOD)' })
  })

  it.each(['127.0.0.1:3101@evil.com', '[::1]evil.com'])('Host %j is a 403', async (host) => {
    const res = await raw(`GET /v1/approvals/pending HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`)
    expect(res.status).toBe(403)
    expect(res.headers).toContain('x-service-version: 0.1.0')
    expect(res.headers).toContain('x-content-type-options: nosniff')
    expect(JSON.parse(res.body)).toMatchObject({ error: 'host_not_allowed' })
  })

  it('an Expect header other than 100-continue is a 417 in the spec shape with X-Service-Version', async () => {
    const res = await raw('GET /v1/approvals/pending HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 200-ok\r\nConnection: close\r\n\r\n')
    expect(res.status).toBe(417)
    expect(res.headers).toContain('x-service-version: 0.1.0')
    expect(JSON.parse(res.body)).toMatchObject({ statusCode: 417, error: 'Expectation Failed' })
  })

  it('a path segment past the router limit is a 414 with X-Service-Version', async () => {
    const res = await raw(`POST /v1/approvals/${'a'.repeat(300)}/decide HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`)
    expect(res.status).toBe(414)
    expect(res.headers).toContain('x-service-version: 0.1.0')
    expect(res.headers).toContain('x-content-type-options: nosniff')
  })
})
