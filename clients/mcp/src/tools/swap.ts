// countersign_swap: exact-in or exact-out through the chain's v3 router (or the aggregator).
import { swapExactIn, swapExactOut, type Address, type ChainId } from '@countersign/client'
import { defaultRouterTable } from '@countersign/shared/builders/routers'
import { z } from 'zod'
import { chainOf, intentOptions, type RegisterTool, type ToolContext } from '../context.js'
import { inSmallestUnits } from '../format.js'
import { assetOf } from '../asset.js'
import { refused } from '../results.js'
import { address, decimals, smallestUnits, symbol } from '../schemas.js'
import { registerSendTool } from '../send.js'

/**
 * The router an intent names by default: for an exact-in swap with provider
 * aggregator the aggregator router (the service builds from a quote only for
 * an intent that names it), otherwise the configured v3 router for the chain
 * (COUNTERSIGN_V3_ROUTER_<id>), else the canonical SwapRouter02.
 */
export function routerFor(ctx: ToolContext, chain: ChainId, provider?: 'v3_router' | 'aggregator', type: 'swap_exact_in' | 'swap_exact_out' = 'swap_exact_in'): Address {
  if (provider === 'aggregator' && type === 'swap_exact_in') return defaultRouterTable().aggregator
  return ctx.config.routers[chain] ?? defaultRouterTable().v3[chain]!
}

export const registerSwap: RegisterTool = (server, ctx) => {
  registerSendTool(
    server,
    ctx,
    'countersign_swap',
    {
      title: 'Swap one ERC-20 token for another',
      description:
        'Swap tokens on a DEX. side "exact_in": sell exactly amountIn of tokenIn for at least minAmountOut of tokenOut. side "exact_out": buy exactly amountOut of tokenOut for at most maxAmountIn of tokenIn. The wallet must first allow the router to spend tokenIn (countersign_approve with the router as spender). Use countersign_preflight first to see the expected amounts. Waits for operator approval when policy asks (up to 5 minutes, with progress), then signs, broadcasts and waits for the receipt; the swap proceeds always go to the wallet itself.',
      inputSchema: {
        side: z.enum(['exact_in', 'exact_out']).describe('"exact_in": fixed amount sold (amountIn, minAmountOut). "exact_out": fixed amount bought (amountOut, maxAmountIn).'),
        tokenIn: address('Token sold (ERC-20 address).'),
        tokenOut: address('Token bought (ERC-20 address).'),
        amountIn: smallestUnits('exact_in only: amount of tokenIn to sell').optional(),
        minAmountOut: smallestUnits('exact_in only: least amount of tokenOut to accept (the swap reverts below it)').optional(),
        amountOut: smallestUnits('exact_out only: amount of tokenOut to buy').optional(),
        maxAmountIn: smallestUnits('exact_out only: most of tokenIn to pay (the swap reverts above it)').optional(),
        decimalsIn: decimals('tokenIn'),
        decimalsOut: decimals('tokenOut'),
        symbolIn: symbol('tokenIn'),
        symbolOut: symbol('tokenOut'),
        router: address('Swap router. Default: the chain\'s Uniswap v3 SwapRouter02 (or COUNTERSIGN_V3_ROUTER_<chainId>); with provider "aggregator" on exact_in, the aggregator router.').optional(),
        provider: z.enum(['v3_router', 'aggregator']).optional().describe('"v3_router" (default) or "aggregator" (needs the service\'s aggregator key; falls back to v3_router).'),
      },
    },
    (args) => {
      const chain = chainOf(ctx, args.chainId)
      const router = (args.router as Address | undefined) ?? routerFor(ctx, chain, args.provider, args.side === 'exact_out' ? 'swap_exact_out' : 'swap_exact_in')
      const base = {
        ...intentOptions(ctx, args),
        router,
        tokenIn: assetOf(args.tokenIn, args.symbolIn, args.decimalsIn),
        tokenOut: assetOf(args.tokenOut, args.symbolOut, args.decimalsOut),
        ...(args.provider ? { provider: args.provider } : {}),
      }
      if (args.side === 'exact_in') {
        if (args.amountIn === undefined || args.minAmountOut === undefined) return { refusal: refused('side "exact_in" needs amountIn and minAmountOut') }
        const intent = swapExactIn({ ...base, amountIn: args.amountIn, minAmountOut: args.minAmountOut })
        const what = `swap ${inSmallestUnits(args.amountIn)} of token ${args.tokenIn} for at least ${inSmallestUnits(args.minAmountOut)} of token ${args.tokenOut}`
        return { intent, what }
      }
      if (args.amountOut === undefined || args.maxAmountIn === undefined) return { refusal: refused('side "exact_out" needs amountOut and maxAmountIn') }
      const intent = swapExactOut({ ...base, amountOut: args.amountOut, maxAmountIn: args.maxAmountIn })
      const what = `buy ${inSmallestUnits(args.amountOut)} of token ${args.tokenOut} for at most ${inSmallestUnits(args.maxAmountIn)} of token ${args.tokenIn}`
      return { intent, what }
    },
  )
}
