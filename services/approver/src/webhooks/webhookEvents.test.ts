import { describe, expect, it } from 'vitest'
import { webhookEventOf } from './webhookEvents.js'

const row = (event: string, data: Record<string, unknown>) => ({ seq: 7, id: 'ev-1', timestamp: 1_700_000_000_000, intent_id: 'intent-1', event, data: JSON.stringify(data) })

describe('webhookEventOf', () => {
  it('turns a grant into approval_decided without the approval token id', () => {
    const e = webhookEventOf(row('approval_granted', { requestId: 'r1', action: 'transfer', tokenId: 'secret-token-id', riskScore: 10, via: 'web' }))
    expect(e).toEqual({ id: 'ev-1', type: 'approval_decided', createdAt: '2023-11-14T22:13:20.000Z', intentId: 'intent-1', data: { approved: true, requestId: 'r1', action: 'transfer', riskScore: 10, via: 'web' } })
    expect(JSON.stringify(e)).not.toContain('secret-token-id')
  })

  it('maps a denial, an expiry and the broadcast outcomes; ignores everything else', () => {
    expect(webhookEventOf(row('approval_rejected', { requestId: 'r1', reason: 'user_declined', via: 'terminal' }))?.data).toEqual({ approved: false, requestId: 'r1', reason: 'user_declined', via: 'terminal' })
    expect(webhookEventOf(row('approval_expired', { requestId: 'r2', action: 'approve' }))?.type).toBe('approval_expired')
    expect(webhookEventOf(row('tx_broadcast', { txHash: '0xab', chainId: 8453 }))?.data).toEqual({ txHash: '0xab', chainId: 8453 })
    expect(webhookEventOf(row('broadcast_failed', { txHash: '0xab', error: 'nonce too low' }))?.type).toBe('broadcast_failed')
    expect(webhookEventOf(row('approval_withdrawn', { requestId: 'r3', reason: 'run_stopped' }))).toMatchObject({ type: 'approval_withdrawn', data: { requestId: 'r3', reason: 'run_stopped' } })
    expect(webhookEventOf(row('policy_evaluated', {}))).toBeNull()
    expect(webhookEventOf(row('web_approval_decided', { requestId: 'r1' }))).toBeNull()
  })

  it('carries the quorum state: the number asked for, each vote by name, and who approved', () => {
    expect(webhookEventOf(row('approval_requested', { requestId: 'r1', action: 'a', riskScore: 1, mode: 'web', quorum: 2 }))?.data).toMatchObject({ quorum: 2 })
    expect(webhookEventOf(row('approval_vote', { requestId: 'r1', action: 'a', operator: 'alice', approved: true, counted: true, approvals: 1, required: 2, via: 'web' }))).toMatchObject({
      type: 'approval_vote',
      data: { operator: 'alice', approved: true, counted: true, approvals: 1, required: 2 },
    })
    const granted = webhookEventOf(row('approval_granted', { requestId: 'r1', tokenId: 'secret-token-id', operator: 'bob', approvedBy: ['alice', 'bob'] }))
    expect(granted?.data).toEqual({ approved: true, requestId: 'r1', operator: 'bob', approvedBy: ['alice', 'bob'] })
  })
})
