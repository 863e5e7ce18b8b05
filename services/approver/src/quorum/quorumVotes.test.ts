import { describe, expect, it } from 'vitest'
import { newQuorum, quorumMet, quorumText, quorumView, recordApproval } from './quorumVotes.js'

describe('quorum votes', () => {
  it('counts distinct operators only, in vote order, and is met at the required number', () => {
    const q = newQuorum(2)
    expect(quorumText(q)).toBe('0 of 2 approvals; 2 more needed from other named operators')
    expect(recordApproval(q, 'alice')).toBe(true)
    expect(recordApproval(q, 'alice')).toBe(false)
    expect(quorumMet(q)).toBe(false)
    expect(quorumView(q)).toEqual({ required: 2, approvals: 1, approvedBy: ['alice'], remaining: 1 })
    expect(quorumText(q)).toBe('1 of 2 approvals (alice); 1 more needed from other named operators')
    expect(recordApproval(q, 'bob')).toBe(true)
    expect(quorumMet(q)).toBe(true)
    expect(quorumView(q)).toEqual({ required: 2, approvals: 2, approvedBy: ['alice', 'bob'], remaining: 0 })
  })

  it('a view is a copy: changing it does not change the votes', () => {
    const q = newQuorum(3)
    recordApproval(q, 'carol')
    quorumView(q).approvedBy.push('mallory')
    expect(q.approvedBy).toEqual(['carol'])
  })
})
