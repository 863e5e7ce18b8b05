// Every transition of an approval request and its token, with an injected
// clock: pending → approved / denied / expired / withdrawn; decide twice;
// decide after expiry; unknown id; the operator token on the HTTP route.
import { randomUUID } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { buildTransaction, defaultRouterTable, intentHash, noPreflight, openAuditLog, type AuditLog, type GrantParams } from '@countersign/shared'
import { actions, makeIntent } from '@countersign/shared/testing/intents'
import { createApprovalService, DecisionError, type Granter } from './approvalService.js'
import { buildApproverApp } from './http/app.js'
import { PendingRequests } from './pendingRequests.js'

const routers = defaultRouterTable()
let audit: AuditLog | undefined
afterEach(async () => {
  await audit?.close()
  audit = undefined
})

function setup(opts: { mode?: 'web' | 'auto'; granter?: Granter } = {}) {
  let now = Date.UTC(2026, 10, 22, 12)
  const clock = () => now
  audit = openAuditLog(path.join(mkdtempSync(path.join(os.tmpdir(), 'cs-appr-')), 'audit.db'), { clock })
  const grants: GrantParams[] = []
  const granter: Granter = opts.granter ?? {
    grant: async (b) => {
      grants.push(b)
      return { approvalTokenId: randomUUID(), expiresAt: now + 300_000 }
    },
  }
  const pending = new PendingRequests(clock)
  const service = createApprovalService({ mode: opts.mode ?? 'web', pending, granter, audit, routers, clock })
  const intent = makeIntent({ action: actions.native('1000'), nowMs: now })
  const request = (signal = new AbortController().signal) =>
    service.requestApproval({ intent, preflight: { ...noPreflight(), riskScore: 12, riskFactors: [{ id: 'x', weight: 12, detail: 'detail' }] }, policyReasons: ['value above threshold'] }, signal)
  const waitPending = async () => {
    for (let i = 0; i < 100 && pending.list().length === 0; i++) await new Promise((r) => setImmediate(r))
    return pending.list()[0]!
  }
  const events = () => audit!.list({ limit: 100 }).map((e) => e.event).reverse()
  return { service, pending, intent, request, waitPending, grants, events, advance: (ms: number) => (now += ms), clock }
}

describe('approval requests', () => {
  it('pending → approved: the token is minted for the hashes the approver derived itself (transaction and intent)', async () => {
    const s = setup()
    const outcome = s.request()
    const p = await s.waitPending()
    expect(p.summary).toMatchObject({ riskScore: 12, recipient: s.intent.action.type === 'transfer_native' ? s.intent.action.to : null, preflightSource: 'no simulation' })
    expect(p.summary.action).toContain('Transfer 0.000000000000001 ETH')
    expect(await s.service.decide(p.requestId, true, 'web')).toEqual({ decided: true, requestId: p.requestId, approved: true })
    const result = await outcome
    expect(result).toMatchObject({ approved: true, requestId: p.requestId })
    expect(s.grants).toEqual([{ txRequestHash: buildTransaction(s.intent, routers).txRequestHash, intentHash: intentHash(s.intent), intentId: s.intent.id }])
    expect(s.events()).toEqual(['approval_requested', 'approval_granted', 'web_approval_decided'])
    expect(s.pending.list()).toEqual([])
  })

  it('pending → denied', async () => {
    const s = setup()
    const outcome = s.request()
    const p = await s.waitPending()
    await s.service.decide(p.requestId, false, 'web')
    expect(await outcome).toMatchObject({ approved: false, reason: 'user_declined' })
    expect(s.grants).toEqual([])
    expect(s.events()).toEqual(['approval_requested', 'approval_rejected', 'web_approval_decided'])
  })

  it('decide twice, decide an unknown id: not_found', async () => {
    const s = setup()
    void s.request()
    const p = await s.waitPending()
    await s.service.decide(p.requestId, true, 'web')
    await expect(s.service.decide(p.requestId, false, 'web')).rejects.toMatchObject({ code: 'not_found' })
    await expect(s.service.decide(randomUUID(), true, 'web')).rejects.toBeInstanceOf(DecisionError)
  })

  it('pending → expired at 300 s: never listed or decidable after, even before the sweep; the caller gets approval_expired', async () => {
    const s = setup()
    const outcome = s.request()
    const p = await s.waitPending()
    s.advance(299_999)
    expect(s.pending.list()).toHaveLength(1)
    s.advance(1)
    expect(s.pending.list()).toEqual([])
    await expect(s.service.decide(p.requestId, true, 'web')).rejects.toMatchObject({ code: 'not_found' })
    s.service.sweep()
    expect(await outcome).toMatchObject({ approved: false, reason: 'approval_expired' })
    expect(s.events()).toContain('approval_expired')
    expect(s.grants).toEqual([])
  })

  it('pending → withdrawn when the caller goes away', async () => {
    const s = setup()
    const gone = new AbortController()
    const outcome = s.request(gone.signal)
    const p = await s.waitPending()
    gone.abort()
    expect(await outcome).toMatchObject({ approved: false, reason: 'withdrawn' })
    expect(s.pending.list()).toEqual([])
    await expect(s.service.decide(p.requestId, true, 'web')).rejects.toMatchObject({ code: 'not_found' })
    await new Promise((r) => setTimeout(r, 20))
    expect(s.events()).toContain('approval_withdrawn')
  })

  it('a signer that cannot mint leaves the request pending', async () => {
    const s = setup({ granter: { grant: async () => Promise.reject(new Error('ECONNREFUSED')) } })
    void s.request()
    const p = await s.waitPending()
    await expect(s.service.decide(p.requestId, true, 'web')).rejects.toMatchObject({ code: 'signer_unavailable' })
    expect(s.pending.list().map((x) => x.requestId)).toEqual([p.requestId])
  })

  it('auto mode approves at once without a pending state', async () => {
    const s = setup({ mode: 'auto' })
    expect(await s.request()).toMatchObject({ approved: true, requestId: 'auto' })
    expect(s.events()).toEqual(['approval_granted'])
  })
})

describe('approver HTTP', () => {
  async function app(token: string | null = 'operator-secret-operator-secret-1234') {
    const s = setup()
    const http = await buildApproverApp({ host: '127.0.0.1', service: s.service, audit: audit!, clock: s.clock, operatorToken: token })
    return { s, http, token }
  }

  it('lists pending requests in the spec shape with ttlSeconds', async () => {
    const { s, http } = await app()
    void s.request()
    const p = await s.waitPending()
    s.advance(10_500)
    const res = await http.inject({ method: 'GET', url: '/v1/approvals/pending' })
    expect(res.statusCode).toBe(200)
    const body = res.json()
    expect(body.pending).toHaveLength(1)
    expect(body.pending[0]).toMatchObject({ requestId: p.requestId, ttlSeconds: 290, summary: { action: expect.any(String), riskScore: 12, warnings: [] } })
    await http.close()
  })

  it('decide needs the operator token; without it 401 and the request stays pending', async () => {
    const { s, http, token } = await app()
    const outcome = s.request()
    const p = await s.waitPending()
    const url = `/v1/approvals/${p.requestId}/decide`
    const none = await http.inject({ method: 'POST', url, payload: { approved: true } })
    expect(none.statusCode).toBe(401)
    expect(none.json()).toMatchObject({ error: 'operator_auth_required' })
    const wrong = await http.inject({ method: 'POST', url, payload: { approved: true }, headers: { authorization: 'Bearer nope' } })
    expect(wrong.statusCode).toBe(401)
    expect(s.pending.list()).toHaveLength(1)
    const ok = await http.inject({ method: 'POST', url, payload: { approved: false }, headers: { authorization: `Bearer ${token}` } })
    expect(ok.statusCode).toBe(200)
    expect(ok.json()).toEqual({ decided: true, requestId: p.requestId, approved: false })
    expect(await outcome).toMatchObject({ reason: 'user_declined' })
    const again = await http.inject({ method: 'POST', url, payload: { approved: true }, headers: { authorization: `Bearer ${token}` } })
    expect(again.statusCode).toBe(404)
    expect(again.json()).toMatchObject({ error: 'not_found' })
    await http.close()
  })

  it.each([[{}], [{ approved: 'yes' }], [{ approved: true, extra: 1 }], [[true]]])('decide with body %j is a 400 in the validation shape', async (payload) => {
    const { http, token } = await app()
    const res = await http.inject({ method: 'POST', url: `/v1/approvals/${randomUUID()}/decide`, payload: payload as object, headers: { authorization: `Bearer ${token}` } })
    expect(res.statusCode).toBe(400)
    expect(Object.keys(res.json()).sort()).toEqual(['error', 'message', 'statusCode'])
    await http.close()
  })

  it('SERVICE_OPERATOR_AUTH=off restores open decide', async () => {
    const { s, http } = await app(null)
    void s.request()
    const p = await s.waitPending()
    const res = await http.inject({ method: 'POST', url: `/v1/approvals/${p.requestId}/decide`, payload: { approved: true } })
    expect(res.statusCode).toBe(200)
    await http.close()
  })

  it('serves the dashboard as HTML with a strict CSP', async () => {
    const { http } = await app()
    const res = await http.inject({ method: 'GET', url: '/approval-ui' })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toContain('text/html')
    expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'")
    expect(res.body).toContain('Pending requests')
    expect(res.headers['x-service-version']).toBe('0.1.0')
    await http.close()
  })
})
