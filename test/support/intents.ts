import { randomUUID } from 'node:crypto'
import { parseEther, type Address } from 'viem'
import type { Action, TxIntent } from '@countersign/shared'

export const BOB = '0x000000000000000000000000000000000000b0b0' as Address

/** A native transfer intent for system tests (policy requires approval for any native value by default). */
export function nativeIntent(amount = parseEther('0.5').toString(), extra: Partial<TxIntent> & { wallet?: { address: Address } } = {}): TxIntent {
  const now = Math.floor(Date.now() / 1000)
  const action: Action = { type: 'transfer_native', to: BOB, amount }
  return {
    version: '1',
    id: randomUUID(),
    timestamp: now,
    chain: { type: 'evm', chainId: 8453 },
    wallet: { address: '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266' },
    action,
    constraints: { maxGasWei: parseEther('0.01').toString(), deadline: now + 600, maxSlippageBps: 0 },
    ...extra,
  }
}
