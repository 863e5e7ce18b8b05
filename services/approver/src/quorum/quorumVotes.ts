// Votes of named operators on a request above requireQuorumAbove (DESIGN §6
// "quorum"). Kept with the pending request, in memory like the request itself:
// a request that outlives the approver does not exist, so neither do its votes.

/** A request that needs `required` distinct named operators; `approvedBy` in vote order. */
export interface QuorumVotes {
  readonly required: number
  readonly approvedBy: string[]
}

/** What the card, the feed, the decide answer and the webhooks say about a quorum. */
export interface QuorumView {
  required: number
  approvals: number
  approvedBy: string[]
  remaining: number
}

export function newQuorum(required: number): QuorumVotes {
  return { required, approvedBy: [] }
}

/** Counts an approval once per operator: false when this operator had already approved. */
export function recordApproval(q: QuorumVotes, operator: string): boolean {
  if (q.approvedBy.includes(operator)) return false
  q.approvedBy.push(operator)
  return true
}

/** Takes back an approval whose vote could not be recorded (the audit append failed): it never counted. */
export function withdrawApproval(q: QuorumVotes, operator: string): void {
  const at = q.approvedBy.lastIndexOf(operator)
  if (at !== -1) q.approvedBy.splice(at, 1)
}

export const quorumMet = (q: QuorumVotes): boolean => q.approvedBy.length >= q.required

export function quorumView(q: QuorumVotes): QuorumView {
  return { required: q.required, approvals: q.approvedBy.length, approvedBy: [...q.approvedBy], remaining: Math.max(0, q.required - q.approvedBy.length) }
}

/** "1 of 2 approvals (alice); 1 more needed": the card's line. */
export function quorumText(q: QuorumVotes): string {
  const who = q.approvedBy.length > 0 ? ` (${q.approvedBy.join(', ')})` : ''
  const left = q.required - q.approvedBy.length
  return `${q.approvedBy.length} of ${q.required} approvals${who}; ${left > 0 ? `${left} more needed from other named operators` : 'quorum met'}`
}
