import { withCanonicalProvider } from '../actions/providers.js'
import type { TxIntent } from '../types.js'
import { normalizeIntentAddresses } from './addresses.js'

/**
 * What the gateway applies to every intent it accepts, before policy, hashes
 * and builders: addresses as every library takes them (a wrong checksum is a
 * BuildError), and a swap provider alias (uniswap_v3, 1inch) replaced by its
 * canonical name. Everything behind the gateway sees this intent.
 */
export function normalizeIntent(intent: TxIntent): TxIntent {
  return withCanonicalProvider(normalizeIntentAddresses(intent))
}
