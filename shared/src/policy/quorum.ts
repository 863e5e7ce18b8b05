import { specOf, type TokenFlow } from '../actions/index.js'
import type { PolicyConfig, TxIntent } from '../types.js'

/** What a request above requireQuorumAbove needs: this many distinct named operators, and why. */
export interface QuorumNeed {
  approvals: number
  /** One text per flow over its figure, for the policy reasons and the card. */
  reasons: string[]
}

/**
 * Whether an intent needs a quorum (DESIGN §6 "quorum"). Every outflow and
 * allowance the action's spec declares (ACTION_SPECS) is measured, so no
 * action type is a side door: an approve counts like a transfer of its amount
 * (the spender may take it at any time), a swap by what may leave the wallet.
 * A token without a figure in `tokens` never needs the quorum.
 */
export function quorumFor(config: Pick<PolicyConfig, 'requireQuorumAbove'>, intent: TxIntent): QuorumNeed | null {
  const rule = config.requireQuorumAbove
  if (rule === null) return null
  const reasons = specOf(intent.action)
    .flows(intent.action)
    .flatMap((flow) => overFigure(rule, flow))
  return reasons.length === 0 ? null : { approvals: rule.approvals, reasons }
}

function overFigure(rule: NonNullable<PolicyConfig['requireQuorumAbove']>, flow: TokenFlow): string[] {
  const needs = `needs ${rule.approvals} operators`
  if (flow.asset === null) {
    if (rule.valueWei === null || flow.amount <= BigInt(rule.valueWei)) return []
    return [`value ${flow.amount} wei is above the quorum threshold of ${rule.valueWei} wei: ${needs}`]
  }
  const token = flow.asset.address.toLowerCase()
  const figure = rule.tokens[token] ?? Object.entries(rule.tokens).find(([k]) => k.toLowerCase() === token)?.[1]
  if (figure === undefined || flow.amount <= BigInt(figure)) return []
  const what = flow.kind === 'allowance' ? `approval amount ${flow.amount} of token ${flow.asset.address}` : `amount ${flow.amount} of token ${flow.asset.address}`
  return [`${what} is above the quorum threshold of ${figure}: ${needs}`]
}
