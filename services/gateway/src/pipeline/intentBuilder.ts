import {
  buildAggregatorTransaction,
  buildTransaction,
  BuildError,
  contractOf,
  isAggregatorIntent,
  keccakCanonical,
  type Address,
  type BuiltTx,
  type RouterTable,
  type TxIntent,
} from '@countersign/shared'
import { AggregatorUnavailable, fetchAggregatorQuote, type AggregatorConfig } from '../aggregator/client.js'
import type { SwapRoutes } from '../store/swapRoutes.js'

export interface IntentBuild extends BuiltTx {
  /** The contract the transaction calls (for the contract allowlist); null for native. */
  contract: Address | null
  /** Why an aggregator swap went through the v3 router instead (part of the description). */
  fallbackReason?: string
}

export type IntentBuilder = (intent: TxIntent) => Promise<IntentBuild>

/**
 * Intent → transaction for every route. Deterministic actions use the shared
 * builders; `swap_exact_in` with provider aggregator uses the aggregator's
 * quote when it has a key and the quote checks out, else the v3 router
 * (SPEC: silent fallback; the description says which path and why). The
 * first decision for an intent is stored and reused.
 */
export function createIntentBuilder(deps: {
  routers: RouterTable
  aggregator: AggregatorConfig
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
    return { ...built, description: again.description }
  }
}

function createRouteBuilder(deps: { routers: RouterTable; aggregator: AggregatorConfig; routes: SwapRoutes; clock: () => number; log?: (msg: string, err?: unknown) => void }): IntentBuilder {
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
        return { ...buildAggregatorTransaction(intent, { to: stored.to as Address, data: stored.data as `0x${string}` }, deps.routers), contract: stored.to as Address }
      }
      return { ...buildTransaction(intent, deps.routers, { fallbackReason: stored.fallbackReason ?? undefined }), contract: v3.txRequest.to, ...(stored.fallbackReason ? { fallbackReason: stored.fallbackReason } : {}) }
    }
    let fallbackReason: string
    try {
      const quote = await fetchAggregatorQuote(deps.aggregator, intent)
      const built = buildAggregatorTransaction(intent, quote, deps.routers)
      deps.routes.put(intent.id, { intentHash, path: 'aggregator', to: built.txRequest.to, data: built.txRequest.data, fallbackReason: null }, deps.clock())
      return { ...built, contract: built.txRequest.to }
    } catch (err) {
      if (!(err instanceof AggregatorUnavailable) && !(err instanceof BuildError)) throw err
      fallbackReason = err.message
      deps.log?.('aggregator not used; falling back to the v3 router', err)
    }
    deps.routes.put(intent.id, { intentHash, path: 'v3_router', to: null, data: null, fallbackReason }, deps.clock())
    return { ...buildTransaction(intent, deps.routers, { fallbackReason }), contract: v3.txRequest.to, fallbackReason }
  }
}
