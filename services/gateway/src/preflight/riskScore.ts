import { tokenLimitFor, type PolicyConfig, type RiskFactor, type TxIntent } from '@countersign/shared'

/** The seven weighted factors of DESIGN.md §3; the score is their sum, capped at 100. */
export const RISK_WEIGHTS = {
  contract_not_allowlisted: 40,
  token_not_allowlisted: 20,
  high_slippage: 15,
  value_near_cap: 20,
  large_approval: 25,
  simulation_reverted: 50,
  high_gas: 10,
} as const

export const UINT256_MAX = (1n << 256n) - 1n
const HIGH_GAS = 400_000n
const HIGH_SLIPPAGE_BPS = 300

export interface RiskInputs {
  intent: TxIntent
  policy: PolicyConfig
  /** The contract the transaction calls, null for a native transfer. */
  contract: string | null
  simulationSuccess: boolean | null
  gasEstimate: bigint | null
}

const has = (list: string[], a: string) => list.some((x) => x.toLowerCase() === a.toLowerCase())

/**
 * A pure function of the intent, the policy and what the simulation found.
 * Allowlist factors apply when that allowlist is configured: with an empty
 * list nothing is "allowlisted" and every call would score alike.
 */
export function scoreRisk({ intent, policy, contract, simulationSuccess, gasEstimate }: RiskInputs): { riskScore: number; riskFactors: RiskFactor[] } {
  const factors: RiskFactor[] = []
  const add = (id: keyof typeof RISK_WEIGHTS, detail: string) => factors.push({ id, weight: RISK_WEIGHTS[id], detail })
  const a = intent.action

  if (contract && policy.contractAllowlist.length > 0 && !has(policy.contractAllowlist, contract)) {
    add('contract_not_allowlisted', `contract ${contract} is not in the contract allowlist`)
  }
  const tokens = a.type === 'transfer' || a.type === 'approve' ? [a.asset] : a.type === 'transfer_native' ? [] : [a.assetIn, a.assetOut]
  const unlisted = policy.tokenAllowlist.length > 0 ? tokens.filter((t) => !has(policy.tokenAllowlist, t.address)) : []
  if (unlisted.length > 0) add('token_not_allowlisted', `token ${unlisted.map((t) => t.address).join(', ')} is not in the token allowlist`)

  if ((a.type === 'swap_exact_in' || a.type === 'swap_exact_out') && intent.constraints.maxSlippageBps > HIGH_SLIPPAGE_BPS) {
    add('high_slippage', `slippage tolerance ${intent.constraints.maxSlippageBps} bps is above ${HIGH_SLIPPAGE_BPS} bps`)
  }

  if (a.type === 'transfer_native' && policy.maxValueWei !== null && BigInt(a.amount) * 2n > BigInt(policy.maxValueWei)) {
    add('value_near_cap', `value ${a.amount} wei is more than half the cap of ${policy.maxValueWei} wei`)
  }
  const outgoing = a.type === 'transfer' ? { t: a.asset, n: a.amount } : a.type === 'swap_exact_in' ? { t: a.assetIn, n: a.amountIn } : a.type === 'swap_exact_out' ? { t: a.assetIn, n: a.maxAmountIn } : null
  const tokenCap = outgoing && tokenLimitFor(policy, outgoing.t.address)?.maxAmount
  if (outgoing && typeof tokenCap === 'string' && BigInt(outgoing.n) * 2n > BigInt(tokenCap)) {
    add('value_near_cap', `amount ${outgoing.n} of token ${outgoing.t.address} is more than half its cap of ${tokenCap}`)
  }

  if (a.type === 'approve') {
    const amount = BigInt(a.amount)
    const cap = tokenLimitFor(policy, a.asset.address)?.maxApprovalAmount ?? policy.maxApprovalAmount
    if (amount >= UINT256_MAX / 2n) add('large_approval', `approval of ${a.amount} is unlimited (the spender can take any amount, forever)`)
    else if (cap !== null && cap !== undefined && amount > BigInt(cap) * 10n) add('large_approval', `approval of ${a.amount} is more than 10x the cap of ${cap}`)
  }

  if (simulationSuccess === false) add('simulation_reverted', 'the simulation reverted: this transaction would fail on chain')
  if (gasEstimate !== null && gasEstimate > HIGH_GAS) add('high_gas', `gas estimate ${gasEstimate} is above ${HIGH_GAS}`)

  return { riskScore: Math.min(100, factors.reduce((s, f) => s + f.weight, 0)), riskFactors: factors }
}
