import { keccak256Hex } from '../canonical/keccak.js'
import { specOf } from '../actions/index.js'
import type { Address, TxIntent } from '../types.js'
import { BuildError } from './errors.js'

/**
 * EIP-55: an address whose hex part is all lower or all upper case carries no
 * checksum; a mixed-case one must match the checksum, where a letter is upper
 * case exactly when the matching nibble of keccak256(lower-case hex) is ≥ 8.
 * A mixed-case address that does not match is almost always a typo.
 */
export function hasValidChecksum(address: string): boolean {
  const hex = address.slice(2)
  if (hex === hex.toLowerCase() || hex === hex.toUpperCase()) return true
  return toChecksumAddress(address) === address
}

/**
 * The EIP-55 form of a schema-valid address (0x + 40 hex digits, any case):
 * the one form every library accepts (viem refuses all-upper-case ones).
 */
export function toChecksumAddress(address: string): Address {
  const lower = address.slice(2).toLowerCase()
  const known = checksummed.get(lower)
  if (known) return known
  const hash = keccak256Hex(lower)
  let out = '0x'
  for (let i = 0; i < 40; i++) {
    const c = lower[i]!
    // Digits have no case; a letter is upper case when its hash nibble is >= 8.
    out += c >= 'a' && parseInt(hash[i + 2]!, 16) >= 8 ? c.toUpperCase() : c
  }
  if (checksummed.size >= CHECKSUMMED_KEPT) checksummed.clear()
  checksummed.set(lower, out as Address)
  return out as Address
}

// Tokens and routers come back in intent after intent: their EIP-55 forms
// are kept (at most CHECKSUMMED_KEPT, emptied when full, so a client cannot
// grow the map) and the keccak is skipped.
const CHECKSUMMED_KEPT = 4096
const checksummed = new Map<string, Address>()

/** Every address an intent carries, with where it is (for the error message). */
export function intentAddresses(intent: TxIntent): Array<[field: string, address: Address]> {
  return [['wallet.address', intent.wallet.address], ...specOf(intent.action).addresses(intent.action)]
}

/** The client's error message for `address` found at `field`, or null when its checksum is fine. */
export function checksumProblem(field: string, address: string): string | null {
  if (hasValidChecksum(address)) return null
  return `${field} ${address} is mixed case but fails its EIP-55 checksum (a typo?); send the checksummed address or the address in lower case`
}

/** Refuses (BuildError, a 400) an intent with a mixed-case address whose EIP-55 checksum is wrong. */
export function assertIntentChecksums(intent: TxIntent): void {
  for (const [field, address] of intentAddresses(intent)) {
    const problem = checksumProblem(field, address)
    if (problem) throw new BuildError('bad_address_checksum', problem)
  }
}

/** Upper-case letters only: valid without a checksum (EIP-55), but viem refuses it. */
function isAllUpperCase(address: string): boolean {
  const hex = address.slice(2)
  return hex === hex.toUpperCase() && hex !== hex.toLowerCase()
}

/**
 * The intent as every library accepts it, after refusing a wrong checksum
 * (BuildError). Lower-case and checksummed addresses already are; an address
 * in upper case only is valid too, but viem refuses it, so it is replaced by
 * its EIP-55 form. The gateway applies this to every intent it accepts, so
 * that nothing behind it (chain calls, approver) meets such an address; the
 * builders apply it again for the signer, which takes intents from whoever
 * reaches its socket. An intent that needs no change is returned as it is. Hashes are
 * unaffected: the txRequestHash input lower-cases addresses.
 */
export function normalizeIntentAddresses(intent: TxIntent): TxIntent {
  assertIntentChecksums(intent)
  if (!intentAddresses(intent).some(([, address]) => isAllUpperCase(address))) return intent
  const c = (address: Address): Address => (isAllUpperCase(address) ? toChecksumAddress(address) : address)
  const action = specOf(intent.action).mapAddresses(intent.action, c)
  return { ...intent, wallet: { ...intent.wallet, address: c(intent.wallet.address) }, action }
}
