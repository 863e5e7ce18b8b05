import { decodeFunctionData, encodeFunctionData, type Hex } from 'viem'
import type { Address, SwapExactInAction, TxIntent, TxRequest } from '../types.js'
import { canonicalProvider } from '../actions/providers.js'
import { positive, uint256 } from './amounts.js'
import { BuildError } from './errors.js'
import { sameAddress, type RouterTable } from './routers.js'
import { resolveSwapRoute } from './swap.js'

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

/**
 * The swap description's flags we sign. AggregationRouterV6's GenericRouter
 * reads three bits: _PARTIAL_FILL (1 << 0: the router may spend less than
 * `amount` and then only checks the output pro rata, so less than the
 * intent's minAmountOut can arrive), _REQUIRES_EXTRA_ETH (1 << 1: native
 * value beside an ERC-20 sale, which we never send) and _USE_PERMIT2 (1 << 2:
 * pulls the tokens through the wallet's Permit2 allowance instead of the
 * router allowance the intent's swap relies on). None of them belongs in an
 * exact-in swap from the wallet, and an unknown bit means a router we do not
 * know: the only safe set is no flag at all.
 */
export const ALLOWED_AGGREGATOR_FLAGS = 0n

/** Does this transaction do exactly what the swap_exact_in intent says? Pure; the gateway, the approver and the signer all call it. */
export function checkAggregatorTx(intent: TxIntent, tx: Pick<TxRequest, 'to' | 'data' | 'value' | 'chainId'>, routers: RouterTable): AggregatorCheck {
  const a = intent.action
  if (a.type !== 'swap_exact_in' || canonicalProvider(a.provider) !== 'aggregator') return { ok: false, problem: 'only swap_exact_in with provider aggregator may use the aggregator' }
  if (tx.chainId !== intent.chain.chainId) return { ok: false, problem: `chain ${tx.chainId} is not the intent's chain ${intent.chain.chainId}` }
  if (!sameAddress(tx.to, routers.aggregator)) return { ok: false, problem: `transaction goes to ${tx.to}, not the aggregator router ${routers.aggregator}` }
  if (BigInt(tx.value) !== 0n) return { ok: false, problem: 'an ERC-20 swap must not send native value' }
  const decoded = decodeSwap(tx.data as Hex)
  if (!decoded) return { ok: false, problem: 'calldata is not the aggregator router’s swap(executor, desc, data) in its one ABI encoding (nothing before, after or between its fields)' }
  const [executor, desc] = decoded
  const checks: Array<[boolean, string]> = [
    [sameAddress(desc.srcToken, a.assetIn.address), `sells ${desc.srcToken}, the intent sells ${a.assetIn.address}`],
    [sameAddress(desc.dstToken, a.assetOut.address), `buys ${desc.dstToken}, the intent buys ${a.assetOut.address}`],
    [desc.amount === BigInt(a.amountIn), `amount in ${desc.amount}, the intent says ${a.amountIn}`],
    [desc.minReturnAmount >= BigInt(a.minAmountOut), `minimum out ${desc.minReturnAmount} is below the intent's ${a.minAmountOut}`],
    [sameAddress(desc.dstReceiver, intent.wallet.address), `proceeds go to ${desc.dstReceiver}, not the wallet ${intent.wallet.address}`],
    // The router pulls the sold tokens from the wallet to srcReceiver before it
    // calls the executor, and checks nothing about that address. The
    // aggregator's own routes hand them to the executor that then trades them
    // (its API also may name the first pool, to save a transfer; refusing that
    // only costs the fallback to v3). Anything else lets the quote send the
    // wallet's tokens anywhere while the executor pays the minimum from
    // elsewhere.
    [sameAddress(desc.srcReceiver, executor), `the sold tokens go to ${desc.srcReceiver}, not to the executor ${executor} that trades them`],
    [desc.flags === ALLOWED_AGGREGATOR_FLAGS, `swap flags ${desc.flags} are not allowed (partial fill, extra ETH, Permit2 and unknown bits are refused)`],
  ]
  const failed = checks.find(([ok]) => !ok)
  return failed ? { ok: false, problem: failed[1] } : { ok: true, minReturnAmount: desc.minReturnAmount }
}

/**
 * swap()'s arguments, only if the calldata is exactly their ABI encoding:
 * decoding alone ignores bytes after the last field and accepts odd offsets
 * and dirty padding, so what the signer reads and what the router reads could
 * differ, and trailing bytes are read by nobody we checked.
 */
function decodeSwap(data: Hex) {
  try {
    const { args } = decodeFunctionData({ abi: aggregatorRouterAbi, data })
    const again = encodeFunctionData({ abi: aggregatorRouterAbi, functionName: 'swap', args })
    return again.toLowerCase() === data.toLowerCase() ? args : null
  } catch {
    return null
  }
}

/**
 * The intent's own checks on the aggregator path, before any calldata is
 * looked at: the same ones the v3 path makes (resolveSwapRoute: a v3 router
 * for the chain, two different tokens, a router of the chain) and amounts the
 * router can take. And the intent must name the aggregator router: `router`
 * is what the approval card shows as "Router", and the transaction goes to
 * the aggregator router, so an intent naming the v3 router (or anything else)
 * is built on v3, never from a quote. The gateway, the approver and the
 * signer all reach this through buildAggregatorTransaction.
 */
export function assertAggregatorRoute(intent: TxIntent, routers: RouterTable): SwapExactInAction {
  if (!isAggregatorIntent(intent)) throw new BuildError('not_aggregator', 'only swap_exact_in with provider aggregator may use the aggregator')
  const a = intent.action
  resolveSwapRoute(a, intent.chain.chainId, routers)
  if (!sameAddress(a.router, routers.aggregator)) {
    throw new BuildError('router_not_aggregator', `router ${a.router} is not the aggregator router ${routers.aggregator}; only an intent that names it is built from the aggregator's quote`)
  }
  positive(a.amountIn, 'action.amountIn')
  uint256(a.minAmountOut, 'action.minAmountOut')
  return a
}

export function isAggregatorIntent(intent: TxIntent): intent is TxIntent & { action: SwapExactInAction } {
  return intent.action.type === 'swap_exact_in' && canonicalProvider(intent.action.provider) === 'aggregator'
}

export function aggregatorRouterOf(routers: RouterTable): Address {
  return routers.aggregator
}
