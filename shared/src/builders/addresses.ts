import { keccak256Hex } from '../canonical/keccak.js'
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
  const lower = hex.toLowerCase()
  if (hex === lower || hex === hex.toUpperCase()) return true
  if (checksummed.has(address)) return true
  const hash = keccak256Hex(lower)
  for (let i = 0; i < 40; i++) {
    const c = hex.charCodeAt(i)
    // Digits have no case; letters are a-f (97..102) or A-F (65..70).
    if (c < 65) continue
    const upper = c <= 70
    if (upper !== parseInt(hash[i + 2]!, 16) >= 8) return false
  }
  remember(address)
  return true
}

// Tokens and routers come back in intent after intent, checksummed: the ones
// already verified skip the keccak. Only correct addresses are kept, and the
// set is bounded (emptied when full), so a client cannot grow it.
const CHECKSUMMED_KEPT = 4096
const checksummed = new Set<string>()
function remember(address: string): void {
  if (checksummed.size >= CHECKSUMMED_KEPT) checksummed.clear()
  checksummed.add(address)
}

/** Every address an intent carries, with where it is (for the error message). */
export function intentAddresses(intent: TxIntent): Array<[field: string, address: Address]> {
  const a = intent.action
  const found: Array<[string, Address]> = [['wallet.address', intent.wallet.address]]
  switch (a.type) {
    case 'transfer':
      found.push(['action.asset.address', a.asset.address], ['action.to', a.to])
      break
    case 'transfer_native':
      found.push(['action.to', a.to])
      break
    case 'approve':
      found.push(['action.asset.address', a.asset.address], ['action.spender', a.spender])
      break
    case 'swap_exact_in':
    case 'swap_exact_out':
      found.push(['action.router', a.router], ['action.assetIn.address', a.assetIn.address], ['action.assetOut.address', a.assetOut.address])
      break
  }
  return found
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
