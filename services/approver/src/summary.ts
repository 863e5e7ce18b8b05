import {
  NATIVE_TOKEN_ADDRESS,
  buildAggregatorTransaction,
  buildTransaction,
  chainName,
  formatAssetAmount,
  formatNative,
  isAggregatorIntent,
  sameAddress,
  specOf,
  type CardField,
  type CounterpartyRole,
  type BalanceDiff,
  type RequestApprovalParams,
  type RiskFactor,
  type RouterTable,
  type TxIntent,
} from '@countersign/shared'
import { applyTokenFacts, describeMismatch, escapeForCard } from '@countersign/shared/server'

/**
 * What the operator sees, derived here from the intent (the preflight part
 * labelled as the gateway's). Every string is shown as is in the dashboard and
 * on terminals, so every string that can carry client or token text is
 * escaped (`\u202e`) and has its runs of white space collapsed to one space
 * (escapeForCard) here, once.
 */
export interface ApprovalSummary {
  intentId: string
  /** The action in words, with the chain's token symbols and decimals when the gateway could read them. */
  action: string
  actionType: TxIntent['action']['type']
  chainId: number
  chain: string
  wallet: string
  recipient: string | null
  spender: string | null
  amount: string | null
  /** The action's own card lines, from its spec. */
  fields: CardField[]
  txRequestHash: string
  to: string
  value: string
  /** Set only when the gateway's skill sandbox runner submitted the intent. */
  skill: string | null
  /** A client's own metadata.source, shown as "client says: …" (anyone can write "skill:…" there). */
  clientSource: string | null
  note: string | null
  /** Where symbols and decimals come from: the token contracts, or the client's declaration (no RPC for the chain). */
  tokenFacts: 'chain' | 'declared'
  /** Declared symbols or decimals the chain contradicts: red lines. */
  tokenMismatches: string[]
  /** Tokens the gateway could not read from the chain (its lookup failed): shown by address in raw units, red lines. */
  unreadTokens: string[]
  riskScore: number
  riskFactors: RiskFactor[]
  warnings: string[]
  balanceDiffs: BalanceDiff[]
  /** The balance changes in words (chain symbols and decimals when known). */
  balanceChanges: string[]
  policyReasons: string[]
  /** Risk score, factors, warnings and balance diffs come from the gateway's preflight. */
  preflightSource: 'gateway preflight' | 'no simulation'
}

const NATIVE = NATIVE_TOKEN_ADDRESS.toLowerCase()

export function summarise(params: RequestApprovalParams, routers: RouterTable): ApprovalSummary {
  const { intent, preflight, policyReasons, txRequest } = params
  // An aggregator quote is checked against the intent here too (it throws if it does not match); everything else is rebuilt.
  const viaAggregator = txRequest !== undefined && isAggregatorIntent(intent) && sameAddress(txRequest.to, routers.aggregator)
  const built = viaAggregator ? buildAggregatorTransaction(intent, { to: txRequest.to, data: txRequest.data }, routers) : buildTransaction(intent, routers)
  // The words: from the intent as the chain describes its tokens (the transaction itself is the intent's).
  const facts = params.tokenFacts ?? []
  const { shown, mismatches, unread } = params.tokenFacts ? applyTokenFacts(intent, facts) : { shown: intent, mismatches: [], unread: [] }
  const description = viaAggregator ? buildAggregatorTransaction(shown, { to: txRequest.to, data: txRequest.data }, routers).description : buildTransaction(shown, routers).description
  const spec = specOf(shown.action)
  const fields = spec.card(shown, { to: built.txRequest.to }).map((f) => ({ ...f, value: escapeForCard(f.value) }))
  const parties = spec.counterparties(shown)
  const party = (role: CounterpartyRole) => parties.find((c) => c.role === role)?.address ?? null
  const source = intent.metadata?.source
  // Only the chain's facts format a balance change; a token without them shows raw units.
  const balanceChange = (d: BalanceDiff) => {
    if (d.token.toLowerCase() === NATIVE) return formatNative(d.change)
    const fact = facts.find((f) => f.address.toLowerCase() === d.token.toLowerCase())
    return formatAssetAmount(d.change, { address: d.token as `0x${string}`, ...(fact?.symbol ? { symbol: fact.symbol } : {}), ...(fact?.decimals != null ? { decimals: fact.decimals } : {}) })
  }
  return {
    intentId: intent.id,
    action: escapeForCard(description),
    actionType: intent.action.type,
    chainId: intent.chain.chainId,
    chain: chainName(intent.chain.chainId),
    wallet: intent.wallet.address,
    recipient: party('recipient'),
    spender: party('spender'),
    // The first amount line of the card: what leaves the wallet, or may.
    amount: fields.find((f) => f.kind === 'amount')?.value ?? null,
    fields,
    txRequestHash: built.txRequestHash,
    to: built.txRequest.to,
    value: built.txRequest.value,
    skill: params.skill !== undefined ? escapeForCard(params.skill) : null,
    clientSource: params.skill === undefined && source !== undefined ? escapeForCard(source) : null,
    note: intent.metadata?.note !== undefined ? escapeForCard(intent.metadata.note) : null,
    tokenFacts: params.tokenFacts ? 'chain' : 'declared',
    tokenMismatches: mismatches.map((m) => escapeForCard(describeMismatch(m))),
    unreadTokens: unread,
    riskScore: preflight.riskScore,
    riskFactors: preflight.riskFactors.map((f) => ({ ...f, detail: escapeForCard(f.detail) })),
    warnings: preflight.warnings.map(escapeForCard),
    balanceDiffs: preflight.balanceDiffs,
    balanceChanges: preflight.balanceDiffs.map((d) => escapeForCard(balanceChange(d))),
    policyReasons: policyReasons.map(escapeForCard),
    preflightSource: preflight.simulationSuccess === null ? 'no simulation' : 'gateway preflight',
  }
}
