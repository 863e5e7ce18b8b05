import { randomUUID } from 'node:crypto'
import { parseEther, type Address } from 'viem'
import type { Action, ChainId, TxIntent } from '@countersign/shared'

export const BOB = '0x000000000000000000000000000000000000b0b0' as Address

export interface IntentOptions {
  chainId?: ChainId
  maxGasWei?: string
  /** Seconds from now; negative for an intent already past its deadline. */
  deadlineOffset?: number
  maxSlippageBps?: number
  /** Any other top-level members (metadata, preferences, a fixed id…). */
  extra?: Partial<TxIntent>
}

/** A fresh intent (new id, timestamp now) for system tests. */
export function intentFor(wallet: Address, action: Action, o: IntentOptions = {}): TxIntent {
  const now = Math.floor(Date.now() / 1000)
  return {
    version: '1',
    id: randomUUID(),
    timestamp: now,
    chain: { type: 'evm', chainId: o.chainId ?? 8453 },
    wallet: { address: wallet },
    action,
    constraints: { maxGasWei: o.maxGasWei ?? parseEther('0.01').toString(), deadline: now + (o.deadlineOffset ?? 600), maxSlippageBps: o.maxSlippageBps ?? 0 },
    ...o.extra,
  }
}

/** A native transfer intent (policy requires approval for any native value by default). */
export function nativeIntent(amount = parseEther('0.5').toString(), extra: Partial<TxIntent> & { wallet?: { address: Address } } = {}): TxIntent {
  return intentFor('0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266', { type: 'transfer_native', to: BOB, amount }, { extra })
}
