import { describe, expect, it } from 'vitest'
import { throughResponseSchema } from '../testing/serialise.js'
import { clampHistoryLimit, decideRouteSchema, historyRouteSchema, pendingRouteSchema, webhookDeliveriesRouteSchema } from './approvalsContract.js'

// A response schema is what fastify serialises with: a field it does not
// list never reaches the dashboard, the terminal client or an agent. Each
// value below has every field the approver sends, optional ones included.

const summary = {
  intentId: 'i-1',
  action: 'Send 1 ETH to 0xb0b',
  actionType: 'transfer_native',
  chainId: 8453,
  chain: 'Base',
  wallet: '0xa11ce',
  recipient: '0xb0b',
  spender: null,
  amount: '1000000000000000000',
  fields: [{ label: 'Send', value: '1 ETH', kind: 'amount' }],
  txRequestHash: '0x' + 'ab'.repeat(32),
  to: '0xb0b',
  value: '1000000000000000000',
  skill: null,
  clientSource: 'agent-7',
  note: null,
  tokenFacts: 'chain',
  tokenMismatches: ['TUSD decimals 18, chain says 6'],
  unreadTokens: ['0x0000000000000000000000000000000000000abc'],
  riskScore: 42,
  riskFactors: [{ id: 'first_time_recipient', weight: 15, detail: 'first payment to 0xb0b' }],
  warnings: ['first payment to this recipient'],
  balanceDiffs: [{ token: '0xeeee', change: '-1000000000000000000' }],
  balanceChanges: ['-1 ETH'],
  policyReasons: ['value above the approval threshold'],
  preflightSource: 'gateway preflight',
}
const card = {
  title: 'Send 1 ETH',
  riskScore: 42,
  tone: 'red',
  alerts: ['Token mismatch'],
  lines: [
    { label: 'Chain', value: 'Base (8453)', kind: 'text' },
    { label: 'Quorum', value: '1 of 2 approvals (alice)', kind: 'text', tone: 'dim' },
  ],
  lists: [{ title: 'Warnings', items: ['first payment'], tone: 'amber' }, { title: 'Policy', items: ['above threshold'] }],
  confirm: true,
}
const quorum = { required: 2, approvals: 1, approvedBy: ['alice'], remaining: 1 }

describe('the approver route schemas drop nothing the approver sends', () => {
  it('pending: summary, card and quorum in full', async () => {
    const body = { pending: [{ requestId: 'r-1', summary, card, ttlSeconds: 299, quorum }, { requestId: 'r-2', summary, card, ttlSeconds: 12 }] }
    expect(await throughResponseSchema(pendingRouteSchema.response, 200, body)).toEqual(body)
  })

  it('decide: a plain decision, and a quorum vote that does not decide yet', async () => {
    const plain = { decided: true, requestId: 'r-1', approved: false }
    expect(await throughResponseSchema(decideRouteSchema.response, 200, plain)).toEqual(plain)
    const vote = { decided: false, requestId: 'r-1', approved: true, operator: 'alice', quorum, counted: true }
    expect(await throughResponseSchema(decideRouteSchema.response, 200, vote)).toEqual(vote)
  })

  it('history: audit events with their own data; webhook deliveries with nulls', async () => {
    const events = { events: [{ id: 'e-1', timestamp: 1700000000000, intentId: 'i-1', event: 'approval_granted', data: { intentId: 'i-1', tokenId: 't', approvedBy: ['alice', 'bob'], nested: { a: [1, null] } } }] }
    expect(await throughResponseSchema(historyRouteSchema.response, 200, events)).toEqual(events)
    const deliveries = {
      configured: true,
      deliveries: [
        { id: 'd-1', type: 'approval_vote', intentId: 'i-1', status: 'pending', attempts: 2, createdAt: 1, nextAttemptAt: 5, lastError: 'HTTP 500', deliveredAt: null },
        { id: 'd-2', type: 'tx_broadcast', intentId: 'i-2', status: 'delivered', attempts: 1, createdAt: 1, nextAttemptAt: null, lastError: null, deliveredAt: 2 },
      ],
    }
    expect(await throughResponseSchema(webhookDeliveriesRouteSchema.response, 200, deliveries)).toEqual(deliveries)
  })

  it('a field a schema does not list is dropped: why every field must be listed', async () => {
    const plain = { decided: true, requestId: 'r-1', approved: true, unlisted: 'x' }
    expect(await throughResponseSchema(decideRouteSchema.response, 200, plain)).toEqual({ decided: true, requestId: 'r-1', approved: true })
  })
})

describe('clampHistoryLimit', () => {
  it.each([
    ['7', 7],
    ['2.7', 2],
    ['0', 1],
    ['-5', 1],
    ['1000', 100],
    // Found by review: numbers beyond the finite ones got the default of 20.
    ['Infinity', 100],
    ['+Infinity', 100],
    ['1e400', 100],
    ['-Infinity', 1],
    ['-1e400', 1],
    // No number at all: the default.
    ['NaN', 20],
    ['abc', 20],
    ['', 20],
    ['  ', 20],
  ])('reads %j as %i', (raw, expected) => {
    expect(clampHistoryLimit(raw)).toBe(expected)
  })

  it('is the default for no value and for a value given twice (an array)', () => {
    expect(clampHistoryLimit(undefined)).toBe(20)
    expect(clampHistoryLimit(['5', '6'])).toBe(20)
  })
})
