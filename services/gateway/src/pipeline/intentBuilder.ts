import {
  assertAggregatorRoute,
  buildAggregatorTransaction,
  buildTransaction,
  BuildError,
  checkAggregatorTx,
  contractOf,
  formatAssetAmount,
  isAggregatorIntent,
  keccakCanonical,
  type Address,
  type BuiltTx,
  type RouterTable,
  type TxIntent,
} from '@countersign/shared'
import { AggregatorUnavailable, fetchAggregatorQuote, type AggregatorConfig } from '../aggregator/client.js'
import { AggregatorRefused, assertAggregatorDeadline, assertAggregatorPrice, slippageBpsFor, type V3Expectation, type V3Reference } from '../aggregator/priceGuard.js'
import type { SwapRoutes } from '../store/swapRoutes.js'

export interface IntentBuild extends BuiltTx {
  /** The contract the transaction calls (for the contract allowlist); null for native. */
  contract: Address | null
  /** Why an aggregator swap went through the v3 router instead (part of the description). */
  fallbackReason?: string
  /** On the aggregator path: its guaranteed minimum and what the v3 route would have delivered (base units of the output). */
  price?: { guaranteed: bigint; v3AmountOut: bigint }
}

export type IntentBuilder = (intent: TxIntent) => Promise<IntentBuild>

/**
 * Intent → transaction for every route. Deterministic actions use the shared
 * builders; `swap_exact_in` with provider aggregator uses the aggregator's
 * quote when it has a key, the quote checks out against the intent and its
 * guaranteed minimum is at least the v3 route's output less the slippage
 * accepted (the intent's, at most the policy's) (aggregator/priceGuard.ts), else the v3 router (SPEC: silent
 * fallback; the description says which path and why, and on the aggregator
 * path both outputs). The first decision for an intent is stored and reused.
 */
export function createIntentBuilder(deps: {
  routers: RouterTable
  aggregator: AggregatorConfig
  /** What the v3 route would deliver for an aggregator intent (simulated on the chain). */
  v3Reference: V3Reference
  /** Policy maxSwapSlippageBps: the most an aggregator quote may fall short of the v3 route, whatever the intent declares. */
  maxSwapSlippageBps: number
  routes: SwapRoutes
  clock: () => number
  log?: (msg: string, err?: unknown) => void
  /** The intent as it should be described: the chain's token symbols and decimals (DESIGN §6). */
  shown?: (intent: TxIntent) => Promise<TxIntent>
}): IntentBuilder {
  const build = createRouteBuilder(deps)
  return async (intent) => {
    const [built, shown] = await Promise.all([build(intent), deps.shown ? deps.shown(intent) : intent])
    if (shown === intent) return built
    // Same transaction; only the words change: rebuilt from the shown intent along the route chosen.
    const aggregator = built.contract !== null && isAggregatorIntent(intent) && built.txRequest.to.toLowerCase() === deps.routers.aggregator.toLowerCase()
    const again = aggregator
      ? buildAggregatorTransaction(shown, { to: built.txRequest.to, data: built.txRequest.data }, deps.routers)
      : buildTransaction(shown, deps.routers, built.fallbackReason ? { fallbackReason: built.fallbackReason } : {})
    return { ...built, description: withPriceNote(again.description, shown, built) }
  }
}

/**
 * The aggregator path's description ends with both outputs, so whoever reads
 * it (agent, operator via the build's audit row) sees what the route
 * guarantees next to what the v3 route would have given.
 */
function withPriceNote(description: string, intent: TxIntent, built: IntentBuild): string {
  if (!built.price || !isAggregatorIntent(intent)) return description
  const out = (amount: bigint) => formatAssetAmount(amount.toString(), intent.action.assetOut)
  return `${description}; the aggregator guarantees at least ${out(built.price.guaranteed)}, the Uniswap v3 route would give ${out(built.price.v3AmountOut)}`
}

function createRouteBuilder(deps: { routers: RouterTable; aggregator: AggregatorConfig; v3Reference: V3Reference; maxSwapSlippageBps: number; routes: SwapRoutes; clock: () => number; log?: (msg: string, err?: unknown) => void }): IntentBuilder {
  return async (intent) => {
    if (!isAggregatorIntent(intent)) {
      const built = buildTransaction(intent, deps.routers)
      return { ...built, contract: contractOf(intent, deps.routers) }
    }
    // Validates the router for the chain before the aggregator is called.
    const v3 = buildTransaction(intent, deps.routers)
    const intentHash = keccakCanonical(intent)
    const stored = deps.routes.get(intent.id)
    if (stored && stored.intentHash === intentHash) {
      if (stored.path === 'aggregator' && stored.to && stored.data) {
        const again = buildAggregatorTransaction(intent, { to: stored.to as Address, data: stored.data as `0x${string}` }, deps.routers)
        const v3AmountOut = stored.v3AmountOut ? BigInt(stored.v3AmountOut) : undefined
        return priced({ ...again, contract: stored.to as Address }, intent, v3AmountOut === undefined ? undefined : { guaranteed: guaranteedOf(intent, again, deps.routers), v3AmountOut })
      }
      return { ...buildTransaction(intent, deps.routers, { fallbackReason: stored.fallbackReason ?? undefined }), contract: v3.txRequest.to, ...(stored.fallbackReason ? { fallbackReason: stored.fallbackReason } : {}) }
    }
    let fallbackReason: string
    try {
      // An intent that names the v3 router is built on v3: the aggregator is not asked.
      assertAggregatorRoute(intent, deps.routers)
      assertAggregatorDeadline(intent, deps.clock())
      // The v3 price is read while the aggregator is asked: one round trip's wait, not two.
      const v3Expected: Promise<V3Expectation> = deps.aggregator.apiKey
        ? deps.v3Reference(intent).catch((err: unknown) => ({ ok: false, problem: (err as Error).message }))
        : Promise.resolve({ ok: false, problem: 'not asked' })
      const quote = await fetchAggregatorQuote(deps.aggregator, intent, slippageBpsFor(intent, deps.maxSwapSlippageBps))
      const built = buildAggregatorTransaction(intent, quote, deps.routers)
      const guaranteed = guaranteedOf(intent, built, deps.routers)
      const v3AmountOut = assertAggregatorPrice(intent, guaranteed, await v3Expected, deps.maxSwapSlippageBps)
      deps.routes.put(intent.id, { intentHash, path: 'aggregator', to: built.txRequest.to, data: built.txRequest.data, fallbackReason: null, v3AmountOut: v3AmountOut.toString() }, deps.clock())
      return priced({ ...built, contract: built.txRequest.to }, intent, { guaranteed, v3AmountOut })
    } catch (err) {
      if (!(err instanceof AggregatorUnavailable) && !(err instanceof BuildError) && !(err instanceof AggregatorRefused)) throw err
      fallbackReason = err.message
      deps.log?.('aggregator not used; falling back to the v3 router', err)
    }
    deps.routes.put(intent.id, { intentHash, path: 'v3_router', to: null, data: null, fallbackReason }, deps.clock())
    return { ...buildTransaction(intent, deps.routers, { fallbackReason }), contract: v3.txRequest.to, fallbackReason }
  }
}

/** The minimum the checked calldata guarantees on chain (desc.minReturnAmount). */
function guaranteedOf(intent: TxIntent, built: BuiltTx, routers: RouterTable): bigint {
  const check = checkAggregatorTx(intent, built.txRequest, routers)
  if (!check.ok) throw new BuildError('aggregator_mismatch', check.problem)
  return check.minReturnAmount
}

/** A route stored before the v3 comparison existed has no v3 figure: described as before. */
function priced(built: IntentBuild, intent: TxIntent, price: IntentBuild['price']): IntentBuild {
  if (!price) return built
  const withPrice = { ...built, price }
  return { ...withPrice, description: withPriceNote(built.description, intent, withPrice) }
}
