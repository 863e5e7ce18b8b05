import { POLICY_VERSION } from '../constants.js'
import { isUnlimitedApproval, specOf, VALUE_RECEIVING_ROLES, type Counterparty, type TokenFlow } from '../actions/index.js'
import type { Address, Asset, PolicyConfig, PolicyDecision, TokenLimit, TxIntent } from '../types.js'
import { quorumFor } from './quorum.js'

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


/**
 * A pure function of configuration, intent and context (SPEC "Policy
 * configuration", DESIGN.md §3). Every rule runs; deny beats
 * require_approval beats allow, and the reasons returned are those of the
 * winning decision.
 */
export function evaluatePolicy(config: PolicyConfig, intent: TxIntent, ctx: PolicyContext): PolicyDecision {
  const deny: Finding[] = []
  const approve: Finding[] = []
  const spec = specOf(intent.action)
  const chainId = intent.chain.chainId
  const flows = spec.flows(intent.action)

  if (!config.allowedChains.includes(chainId)) {
    deny.push({ code: 'chain_not_allowed', text: `chain ${chainId} is not in the allowed chains (${config.allowedChains.join(', ') || 'none'})` })
  }
  if (config.tokenAllowlist.length > 0) {
    for (const t of spec.tokens(intent.action)) {
      if (!listHas(config.tokenAllowlist, t.address)) deny.push({ code: 'token_not_in_allowlist', text: `token ${t.address} is not in the token allowlist` })
    }
  }
  if (config.contractAllowlist.length > 0 && ctx.contract && !listHas(config.contractAllowlist, ctx.contract)) {
    deny.push({ code: 'contract_not_in_allowlist', text: `contract ${ctx.contract} is not in the contract allowlist` })
  }
  if (config.recipientAllowlist.length > 0) {
    for (const c of spec.counterparties(intent)) deny.push(...counterpartyFindings(config, c))
    for (const t of spec.acquires(intent.action)) approve.push(...acquiredFindings(config, t))
  }
  for (const flow of flows) {
    const found = flow.asset === null ? nativeFindings(config, flow) : tokenFindings(config, flow)
    deny.push(...found.deny)
    approve.push(...found.approve)
  }
  // Above the quorum figures a request always goes to the operators, whatever requireApprovalAbove says.
  for (const text of quorumFor(config, intent)?.reasons ?? []) approve.push({ code: 'quorum_required', text })
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

  const [decision, findings] =
    deny.length > 0 ? (['deny', deny] as const) : approve.length > 0 ? (['require_approval', approve] as const) : (['allow', []] as const)
  return {
    decision,
    reasons: findings.map((f) => f.text),
    reasonCodes: findings.map((f) => f.code),
    policyVersion: POLICY_VERSION,
  }
}

interface Findings {
  deny: Finding[]
  approve: Finding[]
}

/**
 * recipientAllowlist covers everyone who can receive value: a transfer's
 * recipient and an approval's spender (a spender may also be a contract of
 * the contract allowlist, such as a router). Swap proceeds go to the wallet
 * and the router is the called contract: neither is a recipient.
 */
function counterpartyFindings(config: PolicyConfig, c: Counterparty): Finding[] {
  if (!VALUE_RECEIVING_ROLES.includes(c.role) || listHas(config.recipientAllowlist, c.address)) return []
  if (c.role === 'spender') {
    if (listHas(config.contractAllowlist, c.address)) return []
    return [{ code: 'recipient_not_in_allowlist', text: `spender ${c.address} is not in the recipient allowlist or the contract allowlist` }]
  }
  return [{ code: 'recipient_not_in_allowlist', text: `${c.role} ${c.address} is not in the recipient allowlist` }]
}

/**
 * A swap pays whoever sells it the token it buys: the token's pool, whose
 * liquidity providers anyone can be, at the pool's own price. With a
 * recipient allowlist, value may leave only to listed parties, so every swap
 * needs an operator:
 * - buying a token the operator has not listed (the first review's attacker
 *   seeded the only pool of a token that calls itself "WETH" and took 50,000
 *   TUSD under recipientAllowlist [BOB]);
 * - buying a listed one, too (the second review's attacker seeded the empty
 *   pool of two listed tokens at a hundredth of their price, and a swap with a
 *   minimum set from the simulation paid it 1,000 TUSD): the simulation, the
 *   slippage bound and the risk score all take the pool's price as given, and
 *   nothing here has another price to hold it to.
 * Not a deny, as an unlisted transfer recipient is: a swap is an exchange, not
 * a gift, and a human can judge the price the card shows. A non-empty
 * tokenAllowlist already denies unlisted tokens outright.
 */
function acquiredFindings(config: PolicyConfig, token: Asset): Finding[] {
  if (listHas(config.tokenAllowlist, token.address)) {
    return [{
      code: 'swap_price_unchecked',
      text: `the swap buys token ${token.address} at its pool's price, which anyone can set for a pool with little liquidity and nothing here checks; with a recipient allowlist, a swap needs an operator's approval`,
    }]
  }
  return [{
    code: 'acquired_token_not_in_allowlist',
    text: `the swap buys token ${token.address}, which is not in the token allowlist; with a recipient allowlist, paying an unlisted token's sellers needs an operator's approval`,
  }]
}

/** Native value: the global cap and the approval threshold. */
function nativeFindings(config: PolicyConfig, flow: TokenFlow): Findings {
  const out: Findings = { deny: [], approve: [] }
  if (config.maxValueWei !== null && flow.amount > BigInt(config.maxValueWei)) {
    out.deny.push({ code: 'value_exceeds_max', text: `value ${flow.amount} wei exceeds the maximum of ${config.maxValueWei} wei` })
  }
  if (flow.amount > BigInt(config.requireApprovalAbove.valueWei)) {
    out.approve.push({
      code: 'value_above_approval_threshold',
      text: `value ${flow.amount} wei is above the approval threshold of ${config.requireApprovalAbove.valueWei} wei`,
    })
  }
  return out
}

/**
 * An ERC-20 outflow or allowance against the token's limits. An allowance
 * counts like a transfer of its amount (the spender can take it at any time);
 * approval caps and the unlimited-approval rule apply to allowances only.
 */
function tokenFindings(config: PolicyConfig, flow: TokenFlow): Findings {
  const out: Findings = { deny: [], approve: [] }
  const token = flow.asset!.address
  const limit = tokenLimitFor(config, token)
  const allowance = flow.kind === 'allowance'
  const what = allowance ? `approval amount ${flow.amount} of token ${token}` : `amount ${flow.amount} of token ${token}`
  if (limit?.maxAmount !== undefined && flow.amount > BigInt(limit.maxAmount)) {
    out.deny.push({ code: allowance ? 'approval_exceeds_max' : 'value_exceeds_max', text: `${what} exceeds the maximum of ${limit.maxAmount}` })
  }
  if (limit?.requireApprovalAbove !== undefined && flow.amount > BigInt(limit.requireApprovalAbove)) {
    out.approve.push({ code: 'token_amount_above_approval_threshold', text: `${what} is above the approval threshold of ${limit.requireApprovalAbove}` })
  }
  if (!allowance) return out
  if (config.maxApprovalAmount !== null && flow.amount > BigInt(config.maxApprovalAmount)) {
    out.deny.push({ code: 'approval_exceeds_max', text: `approval amount ${flow.amount} exceeds the maximum of ${config.maxApprovalAmount}` })
  }
  if (limit?.maxApprovalAmount !== undefined && flow.amount > BigInt(limit.maxApprovalAmount)) {
    out.deny.push({ code: 'approval_exceeds_max', text: `approval amount ${flow.amount} of token ${token} exceeds the maximum of ${limit.maxApprovalAmount}` })
  }
  if (isUnlimitedApproval(flow.amount)) {
    const unlimited = `an unlimited approval (2^96 - 1 or more) of token ${token} to ${flow.spender}`
    if (config.unlimitedApprovals === 'deny') {
      out.deny.push({ code: 'unlimited_approval_denied', text: `${unlimited} is denied by policy (unlimitedApprovals "deny")` })
    } else if (config.unlimitedApprovals === 'require_approval') {
      out.approve.push({ code: 'unlimited_approval', text: `${unlimited} needs an operator's approval` })
    }
  }
  return out
}
