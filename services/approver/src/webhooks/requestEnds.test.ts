// A receiver told approval_requested hears how the request ended, whichever
// way it ended: here, withdrawn because the skill run that asked stopped.
// Found by review: approval_withdrawn reached no receiver, which then showed
// the request as waiting for good.
import { mkdtempSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { randomUUID } from 'node:crypto'
import { expect, it } from 'vitest'
import { defaultRouterTable, noPreflight, openAuditLog } from '@countersign/shared'
import { actions, makeIntent } from '@countersign/shared/testing/intents'
import { createApprovalService } from '../approvalService.js'
import { webChannel } from '../channels/webChannel.js'
import { buildApproverApp } from '../http/app.js'
import { PendingRequests } from '../requests/pendingRequests.js'
import { WebhookOutbox } from './outbox.js'

it('a request withdrawn when its skill run stops is delivered as approval_withdrawn after its approval_requested', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cs-webhook-ends-'))
  const auditFile = path.join(dir, 'audit.db')
  const audit = openAuditLog(auditFile)
  const outbox = new WebhookOutbox(path.join(dir, 'webhooks.db'), auditFile)
  const now = Date.now()
  const service = createApprovalService({
    mode: 'web',
    pending: new PendingRequests(() => now, { ttlMs: 300_000, perWallet: 5, total: 500 }),
    audit,
    routers: defaultRouterTable(),
    clock: () => now,
    granter: { grant: async () => ({ approvalTokenId: randomUUID(), expiresAt: now + 300_000 }), durable: async () => undefined },
  })
  try {
    const owner = randomUUID()
    const ticket = await service.requestApproval({ intent: makeIntent({ action: actions.native('1000') }), preflight: noPreflight(), policyReasons: ['x'], owner })
    expect(ticket.state).toBe('pending')
    expect(service.withdrawOwn(owner)).toBe(true)
    await expect.poll(() => audit.list({ limit: 10 }).map((e) => e.event)).toContain('approval_withdrawn')
    outbox.pull(now)
    const deliveries = outbox.list(10).reverse()
    expect(deliveries.map((d) => d.type)).toEqual(['approval_requested', 'approval_withdrawn'])
    // And the dashboard's list of deliveries shows it.
    const http = await buildApproverApp({ host: '127.0.0.1', service, web: webChannel(() => now), audit, clock: () => now, operatorToken: null, webhooks: outbox })
    try {
      const listed = await http.inject({ method: 'GET', url: '/v1/approvals/webhooks', headers: { host: '127.0.0.1' } })
      expect(listed.statusCode, listed.body).toBe(200)
      expect((listed.json() as { deliveries: Array<{ type: string }> }).deliveries.map((d) => d.type)).toEqual(['approval_withdrawn', 'approval_requested'])
    } finally {
      await http.close()
    }
  } finally {
    outbox.close()
    audit.close()
  }
})
