import {
  buildAggregatorTransaction,
  buildTransaction,
  isAggregatorIntent,
  sameAddress,
  chainName,
  formatAssetAmount,
  formatNative,
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
  const a = intent.action
  const amount =
    a.type === 'transfer' || a.type === 'approve'
      ? formatAssetAmount(a.amount, a.asset)
      : a.type === 'transfer_native'
        ? formatNative(a.amount)
        : a.type === 'swap_exact_in'
          ? formatAssetAmount(a.amountIn, a.assetIn)
          : formatAssetAmount(a.maxAmountIn, a.assetIn)
  return {
    intentId: intent.id,
    action: built.description,
    actionType: a.type,
    chainId: intent.chain.chainId,
    chain: chainName(intent.chain.chainId),
    wallet: intent.wallet.address,
    recipient: a.type === 'transfer' || a.type === 'transfer_native' ? a.to : null,
    spender: a.type === 'approve' ? a.spender : null,
    amount,
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
