import type { Address, Hex, TxIntent, TxRequest } from '../types.js'
import { canonicalize } from './jcs.js'
import { keccak256Hex } from './keccak.js'

/** keccak256 of bytes, or of a string's UTF-8 bytes. */
export function keccakHex(input: Uint8Array | string): Hex {
  return keccak256Hex(input)
}

/** keccak256 over the UTF-8 bytes of the JCS form of `value`. */
export function keccakCanonical(value: unknown): Hex {
  return keccak256Hex(canonicalize(value))
}

/**
 * The hash an approval token binds to (DESIGN.md §3): the transaction as built
 * plus the signing wallet; nonce and fees are left out because they are chosen
 * at send time and capped by maxGasWei.
 */
export function txRequestHash(txRequest: TxRequest, from: Address): Hex {
  return keccakCanonical({
    chainId: txRequest.chainId,
    data: txRequest.data.toLowerCase(),
    from: from.toLowerCase(),
    to: txRequest.to.toLowerCase(),
    type: txRequest.type,
    value: txRequest.value,
  })
}

/**
 * The second hash an approval token binds to (DESIGN.md §6): the whole intent
 * as the operator approved it (id, constraints, preferences and metadata
 * included), so whoever learns a token id can only submit that exact intent.
 */
export function intentHash(intent: TxIntent): Hex {
  return keccakCanonical(intent)
}
