import { recoverAddress, toHex, type Hex } from 'viem'
import type { DigestSignature } from '../signing/keyBackend.js'

/** The order of secp256k1's group. */
export const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n
const HALF_N = SECP256K1_N / 2n

const bigOf = (bytes: Uint8Array): bigint => BigInt(toHex(bytes))
const hex32 = (n: bigint): Hex => `0x${n.toString(16).padStart(64, '0')}`

/**
 * An Ethereum signature from a raw CKM_ECDSA signature (r || s, 32 bytes
 * each). A token may return either s; Ethereum accepts only the low one
 * (EIP-2), so a high s becomes n - s. The token does not say which of the two
 * candidate public keys the signature recovers to, so the recovery bit is the
 * one that recovers the key's own address; neither doing so means the token
 * signed with another key, which is refused.
 */
export async function ethSignatureOf(raw: Uint8Array, digest: Hex, address: string): Promise<DigestSignature> {
  if (raw.length !== 64) throw new Error(`CKM_ECDSA gave ${raw.length} bytes, not 64 (r || s)`)
  const r = bigOf(raw.subarray(0, 32))
  let s = bigOf(raw.subarray(32))
  if (r === 0n || r >= SECP256K1_N || s === 0n || s >= SECP256K1_N) throw new Error('CKM_ECDSA gave an out-of-range signature')
  if (s > HALF_N) s = SECP256K1_N - s
  const want = address.toLowerCase()
  for (const yParity of [0, 1] as const) {
    const signature = { r: hex32(r), s: hex32(s), yParity }
    if ((await recoverAddress({ hash: digest, signature })).toLowerCase() === want) return signature
  }
  throw new Error(`the token's signature does not recover to ${address}`)
}
