import { withCanonicalProvider } from '../actions/providers.js'
import type { TxIntent } from '../types.js'
import { canonicalUuid } from '../validation.js'
import { normalizeIntentAddresses } from './addresses.js'

/**
 * What the gateway applies to every intent it accepts, before policy, hashes
 * and builders: the id in its canonical lower-case text (the gateway takes
 * either case), addresses as every library takes them (a wrong checksum is a
 * BuildError), and a swap provider alias (uniswap_v3, 1inch) replaced by its
 * canonical name. Everything behind the gateway sees this intent.
 */
export function normalizeIntent(intent: TxIntent): TxIntent {
  return withCanonicalProvider(normalizeIntentAddresses(withCanonicalId(intent)))
}

/**
 * One intent, one id: its hash, its approval token's binding, its reservation,
 * its rate-limit and audit rows and the lookup by id all see the same text,
 * whichever case the client wrote it in. The intent itself when already canonical.
 */
function withCanonicalId(intent: TxIntent): TxIntent {
  const id = canonicalUuid(intent.id)
  return id === intent.id ? intent : { ...intent, id }
}
