import {
  contractOf,
  sameAddress,
  specOf,
  type BuiltTx,
  type PolicyConfig,
  type RiskFactor,
  type RouterTable,
  type TxIntent,
} from '@countersign/shared'
import { describeMismatch, escapeForDisplay, mismatchOf } from '@countersign/shared/server'
import type { RecentPreflights, SimulationFacts } from './recentPreflights.js'
import { scoreRisk } from './riskScore.js'

/** The risk sign-and-send enforces; simulationSuccess null: nothing could be simulated. */
export interface SignTimeRisk {
  riskScore: number
  riskFactors: RiskFactor[]
  simulationSuccess: boolean | null
  /** True when a preflight of the last 120 s was reused. */
  reused: boolean
}

export type AssessAtSignTime = (intent: TxIntent, built: BuiltTx) => Promise<SignTimeRisk>

/**
 * DESIGN.md §6 "risk at sign time": sign-and-send cannot skip what
 * approve-request checks. A successful simulation of the same transaction
 * from the last 120 s is reused, else one runs now (`simulate` audits and remembers
 * it). The score is computed again from the intent being signed, so an
 * intent that differs from the preflighted one in what the transaction does
 * not carry (its slippage tolerance) is scored as itself.
 */
export function createSignTimeRisk(deps: {
  recent: RecentPreflights
  simulate: (intent: TxIntent, built: BuiltTx) => Promise<SimulationFacts>
  policy: PolicyConfig
  routers: RouterTable
}): AssessAtSignTime {
  return async (intent, built) => {
    // Only a simulation that succeeded is reused: one that reverted (a swap preflighted before its
    // router allowance was mined) says nothing about the transaction now, and its missing balance
    // changes left the slippage bound unchecked at sign time (found by review).
    let facts = deps.recent.get(built.txRequestHash)
    if (facts?.simulationSuccess !== true) facts = undefined
    const reused = facts !== undefined
    if (!facts) {
      try {
        facts = await deps.simulate(intent, built)
      } catch {
        return { riskScore: 0, riskFactors: [], simulationSuccess: null, reused: false }
      }
    }
    const { riskScore, riskFactors } = scoreRisk({
      intent,
      policy: deps.policy,
      contract: contractOf(intent, deps.routers),
      simulationSuccess: facts.simulationSuccess,
      gasEstimate: facts.gasEstimate,
      tokenMismatches: tokenMismatchesOf(intent, facts),
      // Same txRequestHash: the same tokens on the same chain, so the preflight's finding holds.
      tokenLookalikes: facts.lookalikes,
      // The slippage check is scored against the signing intent's own maxSlippageBps.
      balanceDiffs: facts.balanceDiffs,
      tokensWithoutDecimals: specOf(intent.action)
        .tokens(intent.action)
        .flatMap((asset) => (facts.tokens.some((f) => sameAddress(f.address, asset.address) && f.decimals === null) ? [asset.address] : [])),
      // Same txRequestHash: the same token approved, the same amount.
      tokenSupplies: facts.tokenSupplies ?? {},
    })
    return { riskScore, riskFactors, simulationSuccess: facts.simulationSuccess, reused }
  }
}

/** The intent's declared symbols and decimals against the chain's, as preflight words them. */
function tokenMismatchesOf(intent: TxIntent, facts: SimulationFacts): string[] {
  return specOf(intent.action)
    .tokens(intent.action)
    .flatMap((asset) => {
      const fact = facts.tokens.find((f) => sameAddress(f.address, asset.address))
      const m = fact && mismatchOf(asset, fact)
      return m ? [escapeForDisplay(describeMismatch(m))] : []
    })
}
