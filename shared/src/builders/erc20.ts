import type { Address, ApproveAction, Hex, TransferAction } from '../types.js'
import { uint256 } from './amounts.js'

// ERC-20 calls are the most common transactions and have one fixed layout:
// a 4-byte selector, the address left-padded to 32 bytes, the amount as a
// 32-byte big-endian word. Written out here instead of through viem's ABI
// encoder, which cost ~17 us a build on the gateway's event loop; the tests
// hold both to the same bytes. Addresses arrive schema-checked (0x + 40 hex)
// and checksum-checked (assertIntentChecksums).
const TRANSFER_SELECTOR = 'a9059cbb' // transfer(address,uint256)
const APPROVE_SELECTOR = '095ea7b3' // approve(address,uint256)

function encodeAddressAmountCall(selector: string, address: Address, amount: bigint): Hex {
  return `0x${selector}${'0'.repeat(24)}${address.slice(2).toLowerCase()}${amount.toString(16).padStart(64, '0')}`
}

export function erc20TransferData(action: TransferAction): Hex {
  return encodeAddressAmountCall(TRANSFER_SELECTOR, action.to, uint256(action.amount, 'action.amount'))
}

export function erc20ApproveData(action: ApproveAction): Hex {
  return encodeAddressAmountCall(APPROVE_SELECTOR, action.spender, uint256(action.amount, 'action.amount'))
}
