import { encodeFunctionData } from 'viem'
import type { Address, ChainId, Hex, SwapExactInAction, SwapExactOutAction } from '../types.js'
import { canonicalProvider } from '../actions/providers.js'
import { swapRouter02Abi } from './abis.js'
import { positive, uint256 } from './amounts.js'
import { BuildError } from './errors.js'
import { sameAddress, type RouterTable } from './routers.js'

/**
 * The pool fee tier of every v3 swap we build. An intent has no fee field and
 * the signer must rebuild byte-identical calldata from the intent alone, so
 * the tier is fixed: 0.3%, the tier with the deepest liquidity for most pairs.
 */
export const V3_FEE_TIER = 3000

export type SwapAction = SwapExactInAction | SwapExactOutAction

export interface SwapRoute {
  router: Address
  /** What was asked for and what builds it (the aggregator falls back to the v3 path). */
  requested: 'v3_router' | 'aggregator'
  path: 'v3_router' | 'aggregator'
  /** Why the aggregator was not used, when it was asked for. */
  fallbackReason?: string
}

/**
 * Checks the intent's router against the chain's table before anything else:
 * v3_router (or no provider) must name the chain's v3 router; aggregator may
 * name the aggregator router or the v3 router and builds through the v3 path.
 */
export function resolveSwapRoute(action: SwapAction, chainId: ChainId, routers: RouterTable): SwapRoute {
  const v3 = routers.v3[chainId]
  if (!v3) throw new BuildError('router_not_configured', `no v3 router is configured for chain ${chainId}`)
  const requested = canonicalProvider(action.provider)
  if (sameAddress(action.assetIn.address, action.assetOut.address)) {
    throw new BuildError('same_asset', 'action.assetIn and action.assetOut must be different tokens')
  }
  if (requested === 'v3_router' || action.type === 'swap_exact_out') {
    if (!sameAddress(action.router, v3)) {
      throw new BuildError(
        'router_not_for_chain',
        `router ${action.router} is not the v3 router of chain ${chainId}; expected ${v3}`,
      )
    }
  } else if (!sameAddress(action.router, routers.aggregator) && !sameAddress(action.router, v3)) {
    throw new BuildError(
      'router_not_for_chain',
      `router ${action.router} is not a router of chain ${chainId}; expected the aggregator router ${routers.aggregator} or the v3 router ${v3}`,
    )
  }
  return { router: v3, requested, path: 'v3_router' }
}

/** multicall(deadline, [exactInputSingle | exactOutputSingle]) on SwapRouter02, recipient the wallet. */
export function v3SwapData(action: SwapAction, wallet: Address, deadline: number): Hex {
  if (!Number.isSafeInteger(deadline) || deadline < 0) {
    throw new BuildError('invalid_deadline', `constraints.deadline must be a non-negative integer of Unix seconds; got ${deadline}`)
  }
  const call =
    action.type === 'swap_exact_in'
      ? encodeFunctionData({
          abi: swapRouter02Abi,
          functionName: 'exactInputSingle',
          args: [
            {
              tokenIn: action.assetIn.address,
              tokenOut: action.assetOut.address,
              fee: V3_FEE_TIER,
              recipient: wallet,
              amountIn: positive(action.amountIn, 'action.amountIn'),
              amountOutMinimum: uint256(action.minAmountOut, 'action.minAmountOut'),
              sqrtPriceLimitX96: 0n,
            },
          ],
        })
      : encodeFunctionData({
          abi: swapRouter02Abi,
          functionName: 'exactOutputSingle',
          args: [
            {
              tokenIn: action.assetIn.address,
              tokenOut: action.assetOut.address,
              fee: V3_FEE_TIER,
              recipient: wallet,
              amountOut: positive(action.amountOut, 'action.amountOut'),
              amountInMaximum: positive(action.maxAmountIn, 'action.maxAmountIn'),
              sqrtPriceLimitX96: 0n,
            },
          ],
        })
  return encodeFunctionData({ abi: swapRouter02Abi, functionName: 'multicall', args: [BigInt(deadline), [call]] })
}
