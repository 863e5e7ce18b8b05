import type { ChannelName } from '../config.js'

/**
 * Why the approver cannot meet the policy's requireQuorumAbove, or null. A
 * quorum needs that many distinct named operators (SERVICE_OPERATORS_FILE);
 * with the single operator token, no operator auth or the auto channel it
 * would either never be met or be met by one hand, so the approver refuses
 * to start rather than approve such a request with one approval.
 */
export function quorumStartProblem(o: { required: number | null; operatorAuth: boolean; namedOperators: number; channels: readonly ChannelName[] }): string | null {
  if (o.required === null) return null
  const asks = `the policy's requireQuorumAbove asks for ${o.required} distinct operators`
  if (!o.operatorAuth) return `${asks}, but SERVICE_OPERATOR_AUTH=off lets anyone decide; turn operator auth back on and list the operators in SERVICE_OPERATORS_FILE`
  if (o.channels.includes('auto')) return `${asks}, but SERVICE_APPROVAL_MODE=auto approves without any operator; use the web channel`
  if (o.namedOperators === 0) {
    return `${asks}, but only the single operator token is configured; list at least ${o.required} named operators in SERVICE_OPERATORS_FILE (name and token SHA-256 each), or remove requireQuorumAbove from the policy`
  }
  if (o.namedOperators < o.required) return `${asks}, but SERVICE_OPERATORS_FILE lists only ${o.namedOperators}; the quorum could never be met`
  return null
}
