import { keccak_256 } from '@noble/hashes/sha3.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'
import type { Address, Hex, TxRequest } from '../types.js'
import { canonicalize } from './jcs.js'

export function keccakHex(bytes: Uint8Array): Hex {
  return `0x${bytesToHex(keccak_256(bytes))}`
}

/** keccak256 over the UTF-8 bytes of the JCS form of `value`. */
export function keccakCanonical(value: unknown): Hex {
  return keccakHex(utf8ToBytes(canonicalize(value)))
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
