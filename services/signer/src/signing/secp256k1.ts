import { bytesToHex, hexToBytes, recoverPublicKey, type Hex } from 'viem'
import { privateKeyToAccount, publicKeyToAddress, sign as nobleSign } from 'viem/accounts'

// Every keystore signature, and the recovery bit of every PKCS#11 one, is a
// secp256k1 operation on the signer's one event loop. viem's is @noble/curves
// (pure JS, BigInt): ~600 µs of CPU for a signature here, which capped the
// signer's rate. tiny-secp256k1 is Bitcoin Core's libsecp256k1 (the
// constant-time reference implementation) compiled to WebAssembly: ~190 µs.
// Both derive the nonce by RFC 6979 and give the low s, so their signatures
// are byte-identical (secp256k1.test.ts holds them to it). Under
// `node --jitless` there is no WebAssembly: viem's noble stays the fallback.
const wasm = typeof (globalThis as { WebAssembly?: unknown }).WebAssembly === 'object' ? await import('tiny-secp256k1') : null

/** Which implementation this process signs with. */
export const secp256k1Implementation: 'libsecp256k1' | 'noble' = wasm ? 'libsecp256k1' : 'noble'

/** A recoverable ECDSA signature: r || s (64 bytes, s low) and R's y parity. */
export interface RecoverableSignature {
  rs: Uint8Array
  yParity: 0 | 1
}

/** A private key held in memory that signs 32-byte digests; the key bytes never leave its closure. */
export interface SigningKey {
  /** The EIP-55 address of the key. */
  readonly address: string
  sign(digest: Uint8Array): Promise<RecoverableSignature>
}

/**
 * A signing key over a copy of `secret` (32 bytes), which the caller may then
 * wipe. The copy is a Uint8Array referenced only by the returned closure;
 * no hex string of it is made on the WebAssembly path.
 */
export function signingKeyOf(secret: Uint8Array): SigningKey {
  if (secret.length !== 32) throw new Error('a private key is 32 bytes')
  const key = Uint8Array.from(secret)
  const publicKey = wasm ? wasm.pointFromScalar(key, false) : hexToBytes(privateKeyToAccount(bytesToHex(key)).publicKey)
  if (!publicKey) throw new Error('not a valid secp256k1 private key')
  const address = publicKeyToAddress(bytesToHex(publicKey))
  return {
    address,
    sign: async (digest) => (wasm ? signWasm(digest, key) : signNoble(digest, key)),
  }
}

function signWasm(digest: Uint8Array, key: Uint8Array): RecoverableSignature {
  // libsecp256k1 normalises s to the low half and returns the recovery id of the signature it returns.
  const { signature, recoveryId } = wasm!.signRecoverable(digest, key)
  return { rs: signature, yParity: recoveryId === 1 ? 1 : 0 }
}

/** viem's (noble's) signature, exported so tests can hold both implementations to one answer. */
export async function signNoble(digest: Uint8Array, key: Uint8Array): Promise<RecoverableSignature> {
  const { r, s, yParity } = await nobleSign({ hash: bytesToHex(digest), privateKey: bytesToHex(key) })
  return { rs: hexToBytes(`0x${r.slice(2)}${s.slice(2)}` as Hex), yParity: yParity === 1 ? 1 : 0 }
}

/**
 * The uncompressed public point (65 bytes) that signed `digest` with r || s
 * and recovery bit `yParity`, or null when there is none.
 */
export async function recoverPoint(digest: Uint8Array, rs: Uint8Array, yParity: 0 | 1): Promise<Uint8Array | null> {
  if (wasm) {
    try {
      return wasm.recover(digest, rs, yParity, false)
    } catch {
      return null // r or s out of range, r not an x coordinate: not a signature
    }
  }
  return recoverPointNoble(digest, rs, yParity)
}

/** The order of secp256k1's group. */
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n

/** a⁻¹ mod N by the extended Euclidean algorithm (a in 1..N-1). */
function invModN(a: bigint): bigint {
  let [oldR, r] = [a, N]
  let [oldS, s] = [1n, 0n]
  while (r !== 0n) {
    const q = oldR / r
    ;[oldR, r] = [r, oldR - q * r]
    ;[oldS, s] = [s, oldS - q * s]
  }
  return ((oldS % N) + N) % N
}

const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => a.length === b.length && a.every((x, i) => x === b[i])

/**
 * The recovery bit with which r || s over `digest` recovers to `publicPoint`
 * (uncompressed), or null when it recovers to it with neither: the signature
 * does not verify against that key. Recovering with bit 0 gives
 * Q0 = r⁻¹(s·R − z·G); bit 1 uses −R, so Q0 + Q1 = −2·z·r⁻¹·G. When Q0 is not
 * the key, the key is Q1 exactly when Q + Q0 equals that point: a fixed-base
 * multiplication (~150 µs here) instead of a second recovery (~400 µs).
 */
export async function recoveryBitOf(digest: Uint8Array, rs: Uint8Array, publicPoint: Uint8Array): Promise<0 | 1 | null> {
  const q0 = await recoverPoint(digest, rs, 0)
  if (q0 && sameBytes(q0, publicPoint)) return 0
  if (wasm && q0) {
    // libsecp256k1 takes the digest as a scalar mod N, as ECDSA does.
    const z = BigInt(bytesToHex(digest)) % N
    const r = BigInt(bytesToHex(rs.subarray(0, 32)))
    const c = (((-2n * z * invModN(r)) % N) + N) % N
    if (c !== 0n) {
      const sum = pointAddOrNull(publicPoint, q0)
      const expected = wasm.pointFromScalar(hexToBytes(`0x${c.toString(16).padStart(64, '0')}`), false)
      return sum && expected && sameBytes(sum, expected) ? 1 : null
    }
    // z ≡ 0: Q1 = −Q0, which the sum cannot show (infinity); recover it.
  }
  const q1 = await recoverPoint(digest, rs, 1)
  return q1 && sameBytes(q1, publicPoint) ? 1 : null
}

function pointAddOrNull(a: Uint8Array, b: Uint8Array): Uint8Array | null {
  try {
    return wasm!.pointAdd(a, b, false)
  } catch {
    return null // not a point
  }
}

/** viem's (noble's) recovery, exported so tests can hold both implementations to one answer. */
export async function recoverPointNoble(digest: Uint8Array, rs: Uint8Array, yParity: 0 | 1): Promise<Uint8Array | null> {
  try {
    return hexToBytes(await recoverPublicKey({ hash: digest, signature: bytesToHex(Uint8Array.from([...rs, 27 + yParity])) }))
  } catch {
    return null // r or s out of range, r not an x coordinate: not a signature
  }
}
