import { keccak256, serializeTransaction, type Hex, type TransactionSerializableEIP1559 } from 'viem'

/** Where a key lives: an encrypted key file unlocked into memory, or a PKCS#11 token it never leaves. */
export type BackendName = 'keystore' | 'pkcs11'

/** An ECDSA signature over a 32-byte digest, s in the low half, with the recovery bit. */
export interface DigestSignature {
  r: Hex
  s: Hex
  yParity: 0 | 1
}

/** A key as the signing code sees it: its address, what its backend says of it, and how to sign with it. */
export interface RingKey {
  address: string
  label: string | null
  dev: boolean
  backend: BackendName
  /** Signs a 32-byte digest; throws KeyUnavailableError when the key's backend cannot be reached now. */
  signDigest(digest: Hex): Promise<DigestSignature>
}

/** A source of keys: the keystore or a PKCS#11 token. Each key has exactly one. */
export interface KeyBackend {
  readonly name: BackendName
  keys(): RingKey[]
  /** Releases what the backend holds open (sessions, the module). */
  close(): Promise<void>
}

/**
 * The key exists but cannot sign right now (a hardware token was unplugged,
 * its module lost the session): a refusal the caller may retry, not a crash.
 */
export class KeyUnavailableError extends Error {
  override name = 'KeyUnavailableError'
}

/** Signs an EIP-1559 transaction with any backend's key: hash the unsigned serialization, sign the digest, serialize with the signature. */
export async function signTransactionWith(key: RingKey, tx: TransactionSerializableEIP1559): Promise<Hex> {
  const digest = keccak256(serializeTransaction(tx))
  const { r, s, yParity } = await key.signDigest(digest)
  return serializeTransaction(tx, { r, s, yParity })
}
