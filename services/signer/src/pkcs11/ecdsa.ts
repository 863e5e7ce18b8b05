import { createECDH } from 'node:crypto'
import { toHex, type Hex } from 'viem'
import type { DigestSignature } from '../signing/keyBackend.js'

/** The order of secp256k1's group, and its field prime. */
export const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n
const P = 0xfffffffffffffffffffffffffffffffffffffffffffffffffffffffefffffc2fn
const HALF_N = SECP256K1_N / 2n

const bigOf = (bytes: Uint8Array): bigint => BigInt(toHex(bytes))
const hex32 = (n: bigint): Hex => `0x${n.toString(16).padStart(64, '0')}`
const bytes32 = (n: bigint): Buffer => Buffer.from(n.toString(16).padStart(64, '0'), 'hex')
const mod = (a: bigint, m: bigint): bigint => ((a % m) + m) % m

function powMod(base: bigint, exp: bigint, m: bigint): bigint {
  let result = 1n
  let b = mod(base, m)
  for (let e = exp; e > 0n; e >>= 1n) {
    if (e & 1n) result = (result * b) % m
    b = (b * b) % m
  }
  return result
}
/** a⁻¹ mod m by the extended Euclidean algorithm (several times faster than a^(m-2) with BigInt). */
function invMod(a: bigint, m: bigint): bigint {
  let [oldR, r] = [mod(a, m), m]
  let [oldS, s] = [1n, 0n]
  while (r !== 0n) {
    const q = oldR / r
    ;[oldR, r] = [r, oldR - q * r]
    ;[oldS, s] = [s, oldS - q * s]
  }
  if (oldR !== 1n) throw new Error('not invertible')
  return mod(oldS, m)
}

/** u·G, uncompressed, by OpenSSL (node:crypto's ECDH derives the public key of a private scalar). */
function baseTimes(u: bigint): { x: bigint; y: bigint } {
  const ecdh = createECDH('secp256k1')
  ecdh.setPrivateKey(bytes32(u))
  const point = ecdh.getPublicKey()
  return { x: bigOf(point.subarray(1, 33)), y: bigOf(point.subarray(33)) }
}

/** The x coordinate of u·Q, by OpenSSL (an ECDH shared secret is exactly that). */
function xOfTimes(u: bigint, publicPoint: Uint8Array): bigint {
  const ecdh = createECDH('secp256k1')
  ecdh.setPrivateKey(bytes32(u))
  return bigOf(ecdh.computeSecret(publicPoint))
}

/**
 * The parity of R's y coordinate for signature (r, s) of digest z by public
 * key Q, or null when (r, s) is not a valid signature. ECDSA verification
 * gives R = u1·G + u2·Q (u1 = z/s, u2 = r/s) and checks R.x = r; the token
 * does not return R, and both (r, y) and (r, -y) lie on the curve. The one
 * for which R - u1·G has the x of u2·Q is the real R. Both multiplications
 * run natively in OpenSSL, where viem's pure-JS public-key recovery costs
 * several times a signature on a loaded machine.
 */
function rParity(r: bigint, s: bigint, z: bigint, publicPoint: Uint8Array): 0 | 1 | null {
  const sInv = invMod(s, SECP256K1_N)
  const u1 = mod(z * sInv, SECP256K1_N)
  const u2 = mod(r * sInv, SECP256K1_N)
  if (u1 === 0n || u2 === 0n) return null
  const a = baseTimes(u1)
  const x = xOfTimes(u2, publicPoint)
  const rhs = mod(r * r * r + 7n, P)
  const y = powMod(rhs, (P + 1n) / 4n, P) // P ≡ 3 (mod 4)
  if ((y * y) % P !== rhs) return null
  for (const ry of [y, P - y]) {
    // R - A with A = u1·G: the affine sum of (r, ry) and (a.x, -a.y).
    if (r === a.x) continue
    const lambda = mod((P - a.y - ry) * invMod(mod(a.x - r, P), P), P)
    const sumX = mod(lambda * lambda - r - a.x, P)
    if (sumX === x) return Number(ry & 1n) as 0 | 1
  }
  return null
}

/**
 * An Ethereum signature from a raw CKM_ECDSA signature (r || s, 32 bytes
 * each) by the key whose uncompressed public point is `publicPoint`. A token
 * may return either s; Ethereum accepts only the low one (EIP-2), so a high
 * s becomes n - s. The recovery bit is R's y parity, which is what makes the
 * signature recover to the key's own address; a signature that does not
 * verify against the key is refused.
 */
export function ethSignatureOf(raw: Uint8Array, digest: Hex, publicPoint: Uint8Array): DigestSignature {
  if (raw.length !== 64) throw new Error(`CKM_ECDSA gave ${raw.length} bytes, not 64 (r || s)`)
  const r = bigOf(raw.subarray(0, 32))
  let s = bigOf(raw.subarray(32))
  if (r === 0n || r >= SECP256K1_N || s === 0n || s >= SECP256K1_N) throw new Error('CKM_ECDSA gave an out-of-range signature')
  if (s > HALF_N) s = SECP256K1_N - s
  const yParity = rParity(r, s, mod(BigInt(digest), SECP256K1_N), publicPoint)
  if (yParity === null) throw new Error("the token's signature does not verify against the key's public point")
  return { r: hex32(r), s: hex32(s), yParity }
}
