import { afterEach, describe, expect, it } from 'vitest'
import { noPreflight, type AuditLog } from '@countersign/shared'
import { actions, makeIntent } from '@countersign/shared/testing/intents'
import { makeTestGateway } from '../app.testkit.js'
import type { RunPreflight } from './approveRequest.js'

type Gw = Awaited<ReturnType<typeof makeTestGateway>>
let gw: Gw | undefined
afterEach(async () => {
  await gw?.close()
  gw = undefined
})

/** A preflight that found nothing wrong and audits preflight_completed, as the chain preflight does, without awaiting it. */
const cleanPreflight =
  (audit: AuditLog): RunPreflight =>
  async (intent) => ({
    findings: { ...noPreflight(), simulationSuccess: true, gasEstimate: '21000' },
    recorded: audit.append({ intentId: intent.id, event: 'preflight_completed', data: { simulationSuccess: true } }),
  })

describe('POST /v1/tx/approve-request: audit commits', () => {
  it('an allowed intent pays one commit: preflight_completed, policy_evaluated, approve_request_created and tx_built, in that order, all durable before the answer', async () => {
    gw = await makeTestGateway({ policy: { requireApprovalAbove: { valueWei: '1000000000000000000000' } }, preflight: cleanPreflight })
    const intent = makeIntent({ action: actions.native(), nowMs: gw.clock() })
    const before = gw.audit.commits
    const res = await gw.app.inject({ method: 'POST', url: '/v1/tx/approve-request', payload: intent })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({ approved: true, approvalRequired: false })
    expect(gw.audit.commits - before).toBe(1)
    // Read back from audit.db itself: committed before the answer left.
    const events = gw.audit.list({ limit: 10, intentId: intent.id }).reverse().map((e) => e.event)
    expect(events).toEqual(['preflight_completed', 'policy_evaluated', 'approve_request_created', 'tx_built'])
  })

  it('a denied intent commits preflight_completed, policy_evaluated and approve_request_created together before its 403, and no tx_built', async () => {
    gw = await makeTestGateway({ policy: { recipientAllowlist: ['0x000000000000000000000000000000000000dEaD'] }, preflight: cleanPreflight })
    const intent = makeIntent({ action: actions.native(), nowMs: gw.clock() })
    const before = gw.audit.commits
    const res = await gw.app.inject({ method: 'POST', url: '/v1/tx/approve-request', payload: intent })
    expect(res.statusCode).toBe(403)
    expect(res.json()).toMatchObject({ error: 'policy_denied', decision: 'deny' })
    expect(gw.audit.commits - before).toBe(1)
    const events = gw.audit.list({ limit: 10, intentId: intent.id }).reverse().map((e) => e.event)
    expect(events).toEqual(['preflight_completed', 'policy_evaluated', 'approve_request_created'])
  })
})
