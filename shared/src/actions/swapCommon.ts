import { resolveSwapRoute, v3SwapData, type SwapAction, type SwapRoute } from '../builders/swap.js'
import type { RouterTable } from '../builders/routers.js'
import type { Address, Asset } from '../types.js'
import { mapAsset } from './common.js'
import type { ActionCall, ActionSpec, BuildOptions, CardField, CardTx, Counterparty, IntentWith } from './spec.js'

// What swap_exact_in and swap_exact_out share: the router checks, the v3
// calldata, the wallet as the only receiver of the proceeds.

export function buildSwap(intent: IntentWith<SwapAction>, opts: BuildOptions): ActionCall {
  const route: SwapRoute = {
    ...resolveSwapRoute(intent.action, intent.chain.chainId, opts.routers),
    ...(opts.fallbackReason ? { fallbackReason: opts.fallbackReason } : {}),
  }
  return { to: route.router, data: v3SwapData(intent.action, intent.wallet.address, intent.constraints.deadline), value: 0n, route }
}

export const swapAddresses = (a: SwapAction): Array<[string, Address]> => [
  ['action.router', a.router],
  ['action.assetIn.address', a.assetIn.address],
  ['action.assetOut.address', a.assetOut.address],
]

export const mapSwapAddresses = <A extends SwapAction>(a: A, f: (x: Address) => Address): A => ({
  ...a,
  router: f(a.router),
  assetIn: mapAsset(a.assetIn, f),
  assetOut: mapAsset(a.assetOut, f),
})

/** The router the swap calls, and the wallet, which receives the proceeds (the builders set no other recipient). */
export const swapCounterparties = (intent: IntentWith<SwapAction>): Counterparty[] => [
  { role: 'router', address: intent.action.router, field: 'action.router' },
  { role: 'swap_receiver', address: intent.wallet.address, field: 'wallet.address' },
]

/** Which path builds the swap, in words. */
export function swapVia(route?: SwapRoute): string {
  if (route?.path === 'aggregator') return 'via the aggregator router, calldata from its quote'
  if (route?.requested === 'aggregator') return `via Uniswap v3 router; aggregator unavailable${route.fallbackReason ? `: ${route.fallbackReason}` : ''}`
  return 'via Uniswap v3 router'
}

/**
 * Both tokens by address, as transfer and approve cards name theirs: a
 * symbol is whatever the token contract says it is, and any contract can
 * say "WETH". The router is the one the transaction calls (tx.to), which
 * is not always the intent's `router` (an aggregator intent may be built
 * through the v3 router, or the other way round).
 */
export const swapCardFields = (intent: IntentWith<SwapAction>, tx: CardTx): CardField[] => [
  { label: 'Token in', value: intent.action.assetIn.address, kind: 'address' },
  { label: 'Token out', value: intent.action.assetOut.address, kind: 'address' },
  { label: 'Router', value: tx.to, kind: 'address' },
  { label: 'Proceeds to', value: intent.wallet.address, kind: 'address' },
]

/**
 * The members of both swap specs that do not depend on which side is exact:
 * slippage applies, the router is the contract called, both tokens are
 * touched and assetOut is what the wallet acquires. Each spec adds its
 * schema, its outflow, its words and its card.
 */
export const swapSpecParts = {
  usesSlippage: true,
  addresses: swapAddresses,
  mapAddresses: mapSwapAddresses,
  build: buildSwap,
  contract: (intent: IntentWith<SwapAction>, routers: RouterTable): Address => resolveSwapRoute(intent.action, intent.chain.chainId, routers).router,
  counterparties: swapCounterparties,
  tokens: (a: SwapAction): Asset[] => [a.assetIn, a.assetOut],
  acquires: (a: SwapAction): Asset[] => [a.assetOut],
} satisfies Partial<ActionSpec<SwapAction>>
