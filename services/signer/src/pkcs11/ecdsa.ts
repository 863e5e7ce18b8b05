import { bytesToHex, hexToBytes, type Hex } from 'viem'
import type { DigestSignature } from '../signing/keyBackend.js'
import { recoveryBitOf } from '../signing/secp256k1.js'

/** The order of secp256k1's group. */
export const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n
const HALF_N = SECP256K1_N / 2n

/**
 * An Ethereum signature from a raw CKM_ECDSA signature (r || s, 32 bytes
 * each) by the key whose uncompressed public point is `publicPoint`. A token
 * may return either s; Ethereum accepts only the low one (EIP-2), so a high
 * s becomes n - s. The recovery bit is R's y parity, which the token does not
 * return: it is the bit with which libsecp256k1 recovers the key's own
 * point from the signature (recoveryBitOf). A recovery that gives the key's
 * point is a verification, so a signature that does not verify against the
 * key is refused.
 */
export async function ethSignatureOf(raw: Uint8Array, digest: Hex, publicPoint: Uint8Array): Promise<DigestSignature> {
  if (raw.length !== 64) throw new Error(`CKM_ECDSA gave ${raw.length} bytes, not 64 (r || s)`)
  const r = BigInt(bytesToHex(raw.subarray(0, 32)))
  let s = BigInt(bytesToHex(raw.subarray(32)))
  if (r === 0n || r >= SECP256K1_N || s === 0n || s >= SECP256K1_N) throw new Error('CKM_ECDSA gave an out-of-range signature')
  if (s > HALF_N) s = SECP256K1_N - s
  const rHex = bytesToHex(raw.subarray(0, 32))
  const sHex: Hex = `0x${s.toString(16).padStart(64, '0')}`
  const rs = new Uint8Array(64)
  rs.set(raw.subarray(0, 32))
  rs.set(hexToBytes(sHex), 32)
  const yParity = await recoveryBitOf(hexToBytes(digest), rs, publicPoint)
  if (yParity !== null) return { r: rHex, s: sHex, yParity }
  throw new Error("the token's signature does not verify against the key's public point")
}
