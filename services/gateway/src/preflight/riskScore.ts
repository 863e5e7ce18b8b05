import { isUnlimitedApproval, specOf, tokenLimitFor, type BalanceDiff, type PolicyConfig, type RiskFactor, type TxIntent } from '@countersign/shared'
import { slippageProblem } from './slippage.js'

/** The seven weighted factors of DESIGN.md §3; the score is their sum, capped at 100. */
export const RISK_WEIGHTS = {
  contract_not_allowlisted: 40,
  token_not_allowlisted: 20,
  high_slippage: 15,
  value_near_cap: 20,
  large_approval: 25,
  simulation_reverted: 50,
  high_gas: 10,
  // DESIGN §6: a token declared with another symbol or decimals than it has on chain (the card's red line) also scores.
  declared_token_mismatch: 30,
  // A token whose symbol() is a well-known one of the chain (WETH, USDC, ...) at another address: what a
  // card that names tokens by symbol shows as the real thing. Also needs an operator (APPROVAL_FACTORS).
  lookalike_token_symbol: 30,
  // A swap whose minAmountOut / maxAmountIn is looser than its declared maxSlippageBps allows against the
  // simulated amounts (minAmountOut 0 always is): nothing on chain holds it to a price. Needs an operator.
  slippage_unprotected: 20,
  // A token contract that did not answer decimals(): its amounts are raw numbers, and it may not be an ERC-20
  // at all. An ERC-721 answers approve(spender, n) with the same selector and hands over item n; its card read
  // "Allow to spend 123456 units of token 0x…" (found by review). Needs an operator.
  token_without_decimals: 30,
  // An approval of at least the token's whole totalSupply() below the "unlimited" line (2^96 - 1): the spender can
  // take the balance and every later deposit, as with an unlimited one (found by review: 2^96 - 2 passed
  // unlimitedApprovals "deny" at risk 0). Needs an operator.
  approval_covers_supply: 25,
} as const

/**
 * Factors that need an operator whatever the score: policy may allow a score
 * below maxRiskScore, but not these without a human (approve-request and
 * sign-and-send apply it through requireApprovalForRisk). The signer cannot
 * see them (no network): this check is the gateway's.
 */
export const APPROVAL_FACTORS: ReadonlySet<keyof typeof RISK_WEIGHTS> = new Set(['lookalike_token_symbol', 'slippage_unprotected', 'token_without_decimals', 'approval_covers_supply'])

const HIGH_GAS = 400_000n
const HIGH_SLIPPAGE_BPS = 300

export interface RiskInputs {
  intent: TxIntent
  policy: PolicyConfig
  /** The contract the transaction calls, null for a native transfer. */
  contract: string | null
  simulationSuccess: boolean | null
  gasEstimate: bigint | null
  /** Declared symbols or decimals the chain contradicts, one sentence each (from the token facts). */
  tokenMismatches?: string[]
  /** Tokens claiming a well-known symbol at another address, one sentence each (wellKnownTokens.ts). */
  tokenLookalikes?: string[]
  /** The wallet's simulated balance changes; null when the simulation did not succeed (slippage.ts). */
  balanceDiffs?: BalanceDiff[] | null
  /** The intent's tokens that have code but gave no decimals() (from the token facts). */
  tokensWithoutDecimals?: string[]
  /** totalSupply() of the tokens the intent approves, by lower-case address, where the chain answered. */
  tokenSupplies?: Readonly<Record<string, bigint>>
}

const has = (list: string[], a: string) => list.some((x) => x.toLowerCase() === a.toLowerCase())

/**
 * A pure function of the intent, the policy and what the simulation found.
 * Allowlist factors apply when that allowlist is configured: with an empty
 * list nothing is "allowlisted" and every call would score alike.
 */
export function scoreRisk({ intent, policy, contract, simulationSuccess, gasEstimate, tokenMismatches = [], tokenLookalikes = [], balanceDiffs = null, tokensWithoutDecimals = [], tokenSupplies = {} }: RiskInputs): { riskScore: number; riskFactors: RiskFactor[] } {
  const factors: RiskFactor[] = []
  const add = (id: keyof typeof RISK_WEIGHTS, detail: string) => factors.push({ id, weight: RISK_WEIGHTS[id], detail })
  const spec = specOf(intent.action)

  if (contract && policy.contractAllowlist.length > 0 && !has(policy.contractAllowlist, contract)) {
    add('contract_not_allowlisted', `contract ${contract} is not in the contract allowlist`)
  }
  const tokens = spec.tokens(intent.action)
  const unlisted = policy.tokenAllowlist.length > 0 ? tokens.filter((t) => !has(policy.tokenAllowlist, t.address)) : []
  if (unlisted.length > 0) add('token_not_allowlisted', `token ${unlisted.map((t) => t.address).join(', ')} is not in the token allowlist`)

  if (spec.usesSlippage && intent.constraints.maxSlippageBps > HIGH_SLIPPAGE_BPS) {
    add('high_slippage', `slippage tolerance ${intent.constraints.maxSlippageBps} bps is above ${HIGH_SLIPPAGE_BPS} bps`)
  }
  // The tolerance declared is only words; the bound in the calldata is what protects the swap.
  const unprotected = spec.usesSlippage ? slippageProblem(intent, balanceDiffs, policy.maxSwapSlippageBps) : null
  if (unprotected) add('slippage_unprotected', unprotected)

  for (const flow of spec.flows(intent.action)) {
    if (flow.asset === null) {
      if (policy.maxValueWei !== null && flow.amount * 2n > BigInt(policy.maxValueWei)) {
        add('value_near_cap', `value ${flow.amount} wei is more than half the cap of ${policy.maxValueWei} wei`)
      }
      continue
    }
    const tokenCap = tokenLimitFor(policy, flow.asset.address)?.maxAmount
    if (tokenCap !== undefined && flow.amount * 2n > BigInt(tokenCap)) {
      add('value_near_cap', `amount ${flow.amount} of token ${flow.asset.address} is more than half its cap of ${tokenCap}`)
    }
    if (flow.kind === 'allowance') {
      const cap = tokenLimitFor(policy, flow.asset.address)?.maxApprovalAmount ?? policy.maxApprovalAmount
      const supply = tokenSupplies[flow.asset.address.toLowerCase()]
      if (isUnlimitedApproval(flow.amount)) add('large_approval', `approval of ${flow.amount} is unlimited (the spender can take any amount, forever)`)
      else if (supply !== undefined && supply > 0n && flow.amount >= supply) {
        add('approval_covers_supply', `approval of ${flow.amount} of token ${flow.asset.address} is at least its whole supply of ${supply}: as good as unlimited (the spender can take the balance and every later deposit)`)
      } else if (cap !== null && flow.amount > BigInt(cap) * 10n) add('large_approval', `approval of ${flow.amount} is more than 10x the cap of ${cap}`)
    }
  }

  if (simulationSuccess === false) add('simulation_reverted', 'the simulation reverted: this transaction would fail on chain')
  if (gasEstimate !== null && gasEstimate > HIGH_GAS) add('high_gas', `gas estimate ${gasEstimate} is above ${HIGH_GAS}`)
  if (tokenMismatches.length > 0) add('declared_token_mismatch', tokenMismatches.join('; '))
  if (tokenLookalikes.length > 0) add('lookalike_token_symbol', tokenLookalikes.join('; '))
  if (tokensWithoutDecimals.length > 0) {
    add('token_without_decimals', `token ${tokensWithoutDecimals.join(', ')} did not answer decimals() as an ERC-20 token does: its amounts are raw numbers, and it may be another kind of contract (an ERC-721's approve hands over the item whose number is the amount)`)
  }

  return { riskScore: Math.min(100, factors.reduce((s, f) => s + f.weight, 0)), riskFactors: factors }
}
