import { parseSignature, type Hex } from 'viem'
import type { KeyBackend, RingKey } from '../signing/keyBackend.js'
import type { UnlockedKey } from './keystore.js'

/** A key unlocked from the keystore, as a ring key: viem signs the digest with the private key in memory. */
export function keystoreRingKey(key: Pick<UnlockedKey, 'address' | 'account' | 'label' | 'dev'>): RingKey {
  const { account } = key
  return {
    address: key.address,
    label: key.label,
    dev: key.dev,
    backend: 'keystore',
    async signDigest(digest: Hex) {
      // viem's secp256k1 signing already gives a low s and the recovery bit.
      const { r, s, yParity } = parseSignature(await account.sign!({ hash: digest }))
      return { r, s, yParity: yParity === 1 ? 1 : 0 }
    },
  }
}

/** The keystore's unlocked keys as a backend. */
export function keystoreBackend(keys: UnlockedKey[]): KeyBackend {
  const ring = keys.map(keystoreRingKey)
  return { name: 'keystore', keys: () => ring, close: async () => {} }
}
