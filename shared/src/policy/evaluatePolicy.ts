import { POLICY_VERSION } from '../constants.js'
import type { Address, Asset, PolicyConfig, PolicyDecision, TokenLimit, TxIntent } from '../types.js'

export interface PolicyContext {
  nowMs: number
  /** The wallet's other intents in the sliding hour (this intent excluded). */
  recentTxCount: number
  /** From preflight; absent when no simulation ran. */
  riskScore?: number
  /** The contract the transaction calls (token or router); null for a native transfer. */
  contract: Address | null
}

interface Finding {
  code: string
  text: string
}

const lower = (a: string) => a.toLowerCase()
const listHas = (list: string[], a: string) => list.some((x) => lower(x) === lower(a))

function tokensOf(intent: TxIntent): Asset[] {
  const a = intent.action
  switch (a.type) {
    case 'transfer':
    case 'approve':
      return [a.asset]
    case 'swap_exact_in':
    case 'swap_exact_out':
      return [a.assetIn, a.assetOut]
    case 'transfer_native':
      return []
  }
}

/** The ERC-20 amount that leaves the wallet, and its token, if any. */
function outgoingTokenAmount(intent: TxIntent): { token: Asset; amount: bigint } | null {
  const a = intent.action
  switch (a.type) {
    case 'transfer':
      return { token: a.asset, amount: BigInt(a.amount) }
    case 'swap_exact_in':
      return { token: a.assetIn, amount: BigInt(a.amountIn) }
    case 'swap_exact_out':
      return { token: a.assetIn, amount: BigInt(a.maxAmountIn) }
    default:
      return null
  }
}

/**
 * The limits configured for a token, whatever the spelling of the key: a
 * config from parsePolicyConfig has lowercase keys, one built in code may not.
 */
export function tokenLimitFor(config: Pick<PolicyConfig, 'tokenLimits'>, token: string): TokenLimit | undefined {
  const exact = config.tokenLimits[lower(token)]
  if (exact) return exact
  const key = Object.keys(config.tokenLimits).find((k) => lower(k) === lower(token))
  return key === undefined ? undefined : config.tokenLimits[key]
}

/** True while the intent's deadline (Unix seconds) is still ahead of now (ms); a deadline equal to now has passed. */
export function isWithinDeadline(deadlineSeconds: number, nowMs: number): boolean {
  return deadlineSeconds > Math.floor(nowMs / 1000)
}

const nativeValue = (intent: TxIntent): bigint => (intent.action.type === 'transfer_native' ? BigInt(intent.action.amount) : 0n)

/**
 * A pure function of configuration, intent and context (SPEC "Policy
 * configuration", DESIGN.md §3). Every rule runs; deny beats
 * require_approval beats allow, and the reasons returned are those of the
 * winning decision.
 */
export function evaluatePolicy(config: PolicyConfig, intent: TxIntent, ctx: PolicyContext): PolicyDecision {
  const deny: Finding[] = []
  const approve: Finding[] = []
  const a = intent.action
  const chainId = intent.chain.chainId
  const limits = (token: string): TokenLimit | undefined => tokenLimitFor(config, token)

  if (!config.allowedChains.includes(chainId)) {
    deny.push({ code: 'chain_not_allowed', text: `chain ${chainId} is not in the allowed chains (${config.allowedChains.join(', ') || 'none'})` })
  }
  if (config.tokenAllowlist.length > 0) {
    for (const t of tokensOf(intent)) {
      if (!listHas(config.tokenAllowlist, t.address)) deny.push({ code: 'token_not_in_allowlist', text: `token ${t.address} is not in the token allowlist` })
    }
  }
  if (config.contractAllowlist.length > 0 && ctx.contract && !listHas(config.contractAllowlist, ctx.contract)) {
    deny.push({ code: 'contract_not_in_allowlist', text: `contract ${ctx.contract} is not in the contract allowlist` })
  }
  if (config.recipientAllowlist.length > 0 && (a.type === 'transfer' || a.type === 'transfer_native')) {
    if (!listHas(config.recipientAllowlist, a.to)) deny.push({ code: 'recipient_not_in_allowlist', text: `recipient ${a.to} is not in the recipient allowlist` })
  }

  const value = nativeValue(intent)
  if (config.maxValueWei !== null && value > BigInt(config.maxValueWei)) {
    deny.push({ code: 'value_exceeds_max', text: `value ${value} wei exceeds the maximum of ${config.maxValueWei} wei` })
  }
  const outgoing = outgoingTokenAmount(intent)
  const outLimit = outgoing && limits(outgoing.token.address)
  if (outgoing && outLimit?.maxAmount !== undefined && outgoing.amount > BigInt(outLimit.maxAmount)) {
    deny.push({
      code: 'value_exceeds_max',
      text: `amount ${outgoing.amount} of token ${outgoing.token.address} exceeds the maximum of ${outLimit.maxAmount}`,
    })
  }
  if (a.type === 'approve') {
    const amount = BigInt(a.amount)
    if (config.maxApprovalAmount !== null && amount > BigInt(config.maxApprovalAmount)) {
      deny.push({ code: 'approval_exceeds_max', text: `approval amount ${amount} exceeds the maximum of ${config.maxApprovalAmount}` })
    }
    const cap = limits(a.asset.address)?.maxApprovalAmount
    if (cap !== undefined && amount > BigInt(cap)) {
      deny.push({ code: 'approval_exceeds_max', text: `approval amount ${amount} of token ${a.asset.address} exceeds the maximum of ${cap}` })
    }
  }
  if (ctx.recentTxCount >= config.maxTxPerHour) {
    deny.push({
      code: 'rate_limit_exceeded',
      text: `rate limit exceeded: ${ctx.recentTxCount} transactions in the last hour, limit ${config.maxTxPerHour}`,
    })
  }
  if (ctx.riskScore !== undefined && ctx.riskScore > config.maxRiskScore) {
    deny.push({ code: 'risk_score_too_high', text: `risk score ${ctx.riskScore} exceeds the maximum of ${config.maxRiskScore}` })
  }
  if (!isWithinDeadline(intent.constraints.deadline, ctx.nowMs)) {
    deny.push({
      code: 'deadline_passed',
      text: `deadline ${intent.constraints.deadline} (${new Date(intent.constraints.deadline * 1000).toISOString()}) has passed`,
    })
  }

  if (value > BigInt(config.requireApprovalAbove.valueWei)) {
    approve.push({
      code: 'value_above_approval_threshold',
      text: `value ${value} wei is above the approval threshold of ${config.requireApprovalAbove.valueWei} wei`,
    })
  }
  if (outgoing && outLimit?.requireApprovalAbove !== undefined && outgoing.amount > BigInt(outLimit.requireApprovalAbove)) {
    approve.push({
      code: 'token_amount_above_approval_threshold',
      text: `amount ${outgoing.amount} of token ${outgoing.token.address} is above the approval threshold of ${outLimit.requireApprovalAbove}`,
    })
  }

  const [decision, findings] =
    deny.length > 0 ? (['deny', deny] as const) : approve.length > 0 ? (['require_approval', approve] as const) : (['allow', []] as const)
  return {
    decision,
    reasons: findings.map((f) => f.text),
    reasonCodes: findings.map((f) => f.code),
    policyVersion: POLICY_VERSION,
  }
}
