import {
  contractOf,
  evaluatePolicy,
  quorumFor,
  type Address,
  type AuditLog,
  type Clock,
  type PolicyConfig,
  type PolicyDecision,
  type RiskFactor,
  type RouterTable,
  type TxIntent,
} from '@countersign/shared'
import { APPROVAL_FACTORS, type RISK_WEIGHTS } from '../preflight/riskScore.js'
import type { RateLimitStore } from '../store/rateLimits.js'

export interface PolicyGate {
  /**
   * Counts the wallet's recent intents, evaluates policy, audits
   * `policy_evaluated` (with the wallet: the durable rate-limit record) and,
   * unless denied, records the intent in the rate-limit window. Count,
   * evaluation and record happen in one synchronous step, so concurrent
   * requests for one wallet cannot both slip under the limit.
   */
  check(intent: TxIntent, extra?: { riskScore?: number; contract?: Address | null }): Promise<PolicyDecision>
  /**
   * The same, but returns the decision at once with the audit write still in
   * flight, so a caller can let it share one commit with its next event. The
   * caller must await `audited` before it answers.
   */
  decide(intent: TxIntent, extra?: { riskScore?: number; contract?: Address | null }): { decision: PolicyDecision; audited: Promise<unknown> }
  /**
   * What policy says now of an intent signed before, with nothing counted,
   * recorded or audited: whether its transaction may still be sent. The
   * rate-limit window is not counted (the intent took its place in it when it
   * was decided, and sending its transaction again adds none), and no risk is
   * scored: both belong to the decision made when the intent was signed. A
   * score of now needs a simulation, and one that fails (a node down) would
   * have to either pass the transaction unscored or refuse a re-send that
   * policy's rules allow; and a simulation run after the fate was read can
   * see the transaction's own effects once mined meanwhile (found by review).
   * A maxTxPerHour of 0 still denies: it stops every transaction of the
   * wallet, sent before or not.
   */
  reconsider(intent: TxIntent, extra: { contract: Address | null }): PolicyDecision
  /** How many distinct named operators the intent needs (policy requireQuorumAbove); null when one approval is enough. */
  quorumFor(intent: TxIntent): number | null
}

export function createPolicyGate(deps: {
  policy: PolicyConfig
  routers: RouterTable
  rateLimits: RateLimitStore
  audit: AuditLog
  clock: Clock
}): PolicyGate {
  const gate: PolicyGate = {
    quorumFor: (intent) => quorumFor(deps.policy, intent)?.approvals ?? null,
    reconsider: (intent, extra) => evaluatePolicy(deps.policy, intent, { nowMs: deps.clock(), recentTxCount: 0, contract: extra.contract }),
    async check(intent, extra = {}) {
      const { decision, audited } = gate.decide(intent, extra)
      await audited
      return decision
    },
    decide(intent, extra = {}) {
      const contract = extra.contract !== undefined ? extra.contract : contractOf(intent, deps.routers)
      const decision = deps.rateLimits.atomically(() => {
        const nowMs = deps.clock()
        const recentTxCount = deps.rateLimits.countOthers(intent.wallet.address, intent.id, nowMs, deps.policy.maxTxPerHour)
        const d = evaluatePolicy(deps.policy, intent, { nowMs, recentTxCount, contract, riskScore: extra.riskScore })
        if (d.decision !== 'deny') deps.rateLimits.record(intent.wallet.address, intent.id, nowMs)
        return d
      })
      const audited = deps.audit.append({
        intentId: intent.id,
        event: 'policy_evaluated',
        // The wallet lets the rate-limit window be rebuilt from these events at start.
        data: { decision: decision.decision, reasons: decision.reasons, reasonCodes: decision.reasonCodes, wallet: intent.wallet.address },
      })
      return { decision, audited }
    },
  }
  return gate
}

/**
 * Nothing could be simulated (the node failed): a human looks instead of
 * policy silently allowing. approve-request and sign-and-send apply the same
 * rule; a deny stays a deny.
 */
export function requireApprovalWithoutSimulation(decision: PolicyDecision, simulationSuccess: boolean | null): PolicyDecision {
  if (decision.decision !== 'allow' || simulationSuccess !== null) return decision
  return { ...decision, decision: 'require_approval', reasons: ['no simulation could run for this intent; approval required'], reasonCodes: ['simulation_unavailable'] }
}

/**
 * Risk factors that need an operator whatever the score (riskScore.ts
 * APPROVAL_FACTORS): an allow becomes require_approval, and a decision that
 * already requires approval gets their details among its reasons (the card's
 * "Why approval is needed"). A deny stays a deny. approve-request and
 * sign-and-send apply the same rule; the signer cannot (it does not
 * simulate), so sign-and-send tells it a token is needed (approvalRequired).
 */
export function requireApprovalForRisk(decision: PolicyDecision, riskFactors: RiskFactor[]): PolicyDecision {
  const needed = riskFactors.filter((f) => APPROVAL_FACTORS.has(f.id as keyof typeof RISK_WEIGHTS))
  if (decision.decision === 'deny' || needed.length === 0) return decision
  const base = decision.decision === 'allow' ? { reasons: [], reasonCodes: [] } : decision
  return {
    ...decision,
    decision: 'require_approval',
    reasons: [...base.reasons, ...needed.map((f) => `${f.detail}; approval required`)],
    reasonCodes: [...base.reasonCodes, ...needed.map((f) => f.id)],
  }
}

/**
 * The rules only the gateway can apply, as it alone simulates: the same in
 * approve-request and sign-and-send, so that an intent needs an operator at
 * sign time whenever it needed one when it was presented.
 */
export function applyPreflightRules(decision: PolicyDecision, findings: { simulationSuccess: boolean | null; riskFactors: RiskFactor[] }): PolicyDecision {
  return requireApprovalForRisk(requireApprovalWithoutSimulation(decision, findings.simulationSuccess), findings.riskFactors)
}
