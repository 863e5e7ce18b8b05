import type { LocalAccount } from 'viem'

/** An unlocked key as the signing code sees it: an account that can sign, and what the keystore says of it. */
export interface RingKey {
  address: string
  account: LocalAccount
  label: string | null
  dev: boolean
}

/** The unlocked keys, by lowercase address. Lives only in the signer's memory. */
export interface KeyRing {
  get(address: string): RingKey | undefined
  all(): RingKey[]
}

export function keyRingOf(keys: Iterable<RingKey>): KeyRing {
  const map = new Map<string, RingKey>()
  for (const k of keys) map.set(k.address.toLowerCase(), k)
  return {
    get: (address) => map.get(address.toLowerCase()),
    all: () => [...map.values()],
  }
}
