import {
  buildAggregatorTransaction,
  buildTransaction,
  isAggregatorIntent,
  sameAddress,
  chainName,
  specOf,
  type CardField,
  type CounterpartyRole,
  type BalanceDiff,
  type PreflightFindings,
  type RiskFactor,
  type RouterTable,
  type TxIntent,
  type TxRequest,
} from '@countersign/shared'

/** What the operator sees. Everything but the `preflight` part is derived here from the intent. */
export interface ApprovalSummary {
  intentId: string
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
  skill: string | null
  note: string | null
  riskScore: number
  riskFactors: RiskFactor[]
  warnings: string[]
  balanceDiffs: BalanceDiff[]
  policyReasons: string[]
  /** Risk score, factors, warnings and balance diffs come from the gateway's preflight. */
  preflightSource: 'gateway preflight' | 'no simulation'
}

export function summarise(intent: TxIntent, preflight: PreflightFindings, policyReasons: string[], routers: RouterTable, txRequest?: TxRequest): ApprovalSummary {
  // An aggregator quote is checked against the intent here too (it throws if it does not match); everything else is rebuilt.
  const built =
    txRequest && isAggregatorIntent(intent) && sameAddress(txRequest.to, routers.aggregator)
      ? buildAggregatorTransaction(intent, { to: txRequest.to, data: txRequest.data }, routers)
      : buildTransaction(intent, routers)
  const spec = specOf(intent.action)
  const fields = spec.card(intent)
  const parties = spec.counterparties(intent)
  const party = (role: CounterpartyRole) => parties.find((c) => c.role === role)?.address ?? null
  return {
    intentId: intent.id,
    action: built.description,
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
    skill: intent.metadata?.source ?? null,
    note: intent.metadata?.note ?? null,
    riskScore: preflight.riskScore,
    riskFactors: preflight.riskFactors,
    warnings: preflight.warnings,
    balanceDiffs: preflight.balanceDiffs,
    policyReasons,
    preflightSource: preflight.simulationSuccess === null ? 'no simulation' : 'gateway preflight',
  }
}
