import { decodeFunctionData, type Hex } from 'viem'
import type { Address, SwapExactInAction, TxIntent, TxRequest } from '../types.js'
import { canonicalProvider } from '../actions/providers.js'
import { sameAddress, type RouterTable } from './routers.js'

/**
 * The aggregator's router (1inch AggregationRouterV6) call we accept: the
 * generic `swap(executor, desc, data)`, whose description struct names the
 * tokens, the amount, the minimum return and the receiver, so the signer can
 * check them against the intent. Other entry points (unoswap…) encode pools,
 * not tokens, and cannot be checked: they are refused.
 */
export const aggregatorRouterAbi = [
  {
    type: 'function',
    name: 'swap',
    stateMutability: 'payable',
    inputs: [
      { name: 'executor', type: 'address' },
      {
        name: 'desc',
        type: 'tuple',
        components: [
          { name: 'srcToken', type: 'address' },
          { name: 'dstToken', type: 'address' },
          { name: 'srcReceiver', type: 'address' },
          { name: 'dstReceiver', type: 'address' },
          { name: 'amount', type: 'uint256' },
          { name: 'minReturnAmount', type: 'uint256' },
          { name: 'flags', type: 'uint256' },
        ],
      },
      { name: 'data', type: 'bytes' },
    ],
    outputs: [
      { name: 'returnAmount', type: 'uint256' },
      { name: 'spentAmount', type: 'uint256' },
    ],
  },
] as const

export type AggregatorCheck = { ok: true; minReturnAmount: bigint } | { ok: false; problem: string }

/** Does this transaction do exactly what the swap_exact_in intent says? Pure; the gateway and the signer both call it. */
export function checkAggregatorTx(intent: TxIntent, tx: Pick<TxRequest, 'to' | 'data' | 'value' | 'chainId'>, routers: RouterTable): AggregatorCheck {
  const a = intent.action
  if (a.type !== 'swap_exact_in' || canonicalProvider(a.provider) !== 'aggregator') return { ok: false, problem: 'only swap_exact_in with provider aggregator may use the aggregator' }
  if (tx.chainId !== intent.chain.chainId) return { ok: false, problem: `chain ${tx.chainId} is not the intent's chain ${intent.chain.chainId}` }
  if (!sameAddress(tx.to, routers.aggregator)) return { ok: false, problem: `transaction goes to ${tx.to}, not the aggregator router ${routers.aggregator}` }
  if (BigInt(tx.value) !== 0n) return { ok: false, problem: 'an ERC-20 swap must not send native value' }
  let decoded
  try {
    decoded = decodeFunctionData({ abi: aggregatorRouterAbi, data: tx.data as Hex })
  } catch {
    return { ok: false, problem: 'calldata is not the aggregator router’s swap(executor, desc, data)' }
  }
  const desc = decoded.args[1]
  const checks: Array<[boolean, string]> = [
    [sameAddress(desc.srcToken, a.assetIn.address), `sells ${desc.srcToken}, the intent sells ${a.assetIn.address}`],
    [sameAddress(desc.dstToken, a.assetOut.address), `buys ${desc.dstToken}, the intent buys ${a.assetOut.address}`],
    [desc.amount === BigInt(a.amountIn), `amount in ${desc.amount}, the intent says ${a.amountIn}`],
    [desc.minReturnAmount >= BigInt(a.minAmountOut), `minimum out ${desc.minReturnAmount} is below the intent's ${a.minAmountOut}`],
    [sameAddress(desc.dstReceiver, intent.wallet.address), `proceeds go to ${desc.dstReceiver}, not the wallet ${intent.wallet.address}`],
  ]
  const failed = checks.find(([ok]) => !ok)
  return failed ? { ok: false, problem: failed[1] } : { ok: true, minReturnAmount: desc.minReturnAmount }
}

export function isAggregatorIntent(intent: TxIntent): intent is TxIntent & { action: SwapExactInAction } {
  return intent.action.type === 'swap_exact_in' && canonicalProvider(intent.action.provider) === 'aggregator'
}

export function aggregatorRouterOf(routers: RouterTable): Address {
  return routers.aggregator
}
