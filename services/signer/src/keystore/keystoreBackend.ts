import { bytesToHex, hexToBytes, type Hex } from 'viem'
import type { KeyBackend, RingKey } from '../signing/keyBackend.js'
import type { UnlockedKey } from './keystore.js'

/** A key unlocked from the keystore, as a ring key: libsecp256k1 signs the digest with the private key in memory. */
export function keystoreRingKey(key: Pick<UnlockedKey, 'address' | 'signingKey' | 'label' | 'dev'>): RingKey {
  const { signingKey } = key
  return {
    address: key.address,
    label: key.label,
    dev: key.dev,
    backend: 'keystore',
    async signDigest(digest: Hex) {
      // The signature already has a low s and the recovery bit.
      const { rs, yParity } = await signingKey.sign(hexToBytes(digest))
      return { r: bytesToHex(rs.subarray(0, 32)), s: bytesToHex(rs.subarray(32)), yParity }
    },
  }
}

/** The keystore's unlocked keys as a backend. */
export function keystoreBackend(keys: UnlockedKey[]): KeyBackend {
  const ring = keys.map(keystoreRingKey)
  return { name: 'keystore', keys: () => ring, close: async () => {} }
}
