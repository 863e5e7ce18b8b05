// Swap provider names. countersign's own are v3_router and aggregator; agent
// clients written for the same wire contract say uniswap_v3 and 1inch. Both
// are accepted, and the gateway maps an alias to its canonical name before
// anything else sees the intent (policy, hashes, builders, approver, signer).
// The builders map too, so the signer accepts what the gateway accepts.
import type { SwapProvider, SwapProviderAlias, TxIntent } from '../types.js'

export const PROVIDER_ALIASES: Readonly<Record<SwapProviderAlias, SwapProvider>> = { uniswap_v3: 'v3_router', '1inch': 'aggregator' }

/** The canonical name of a provider; no provider means the v3 router. */
export function canonicalProvider(provider: SwapProvider | SwapProviderAlias | undefined): SwapProvider {
  if (provider === undefined) return 'v3_router'
  return provider in PROVIDER_ALIASES ? PROVIDER_ALIASES[provider as SwapProviderAlias] : (provider as SwapProvider)
}

/** The intent with a provider alias replaced by its canonical name; the same object when there is none. */
export function withCanonicalProvider(intent: TxIntent): TxIntent {
  const action = intent.action
  if ((action.type !== 'swap_exact_in' && action.type !== 'swap_exact_out') || action.provider === undefined) return intent
  const provider = canonicalProvider(action.provider)
  return provider === action.provider ? intent : { ...intent, action: { ...action, provider } }
}
