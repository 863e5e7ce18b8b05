import { keccakHex } from '@countersign/shared'
import { serializeTransaction, type Hex, type TransactionSerializableEIP1559 } from 'viem'
import { signedEip1559 } from './signedTx.js'

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

/** A signed transaction and its hash. */
export interface SignedTransaction {
  signedTx: Hex
  txHash: Hex
}

/**
 * Signs an EIP-1559 transaction with any backend's key: hash the unsigned
 * serialization, sign the digest, append the signature to the serialization.
 * It runs on the signer's event loop for every signature, so the fields are
 * serialized once and both hashes use the WebAssembly keccak.
 */
export async function signTransactionWith(key: RingKey, tx: TransactionSerializableEIP1559): Promise<SignedTransaction> {
  const unsigned = Buffer.from(serializeTransaction(tx).slice(2), 'hex')
  const signature = await key.signDigest(keccakHex(unsigned))
  const signed = signedEip1559(unsigned, signature)
  return { signedTx: `0x${Buffer.from(signed.buffer, signed.byteOffset, signed.length).toString('hex')}`, txHash: keccakHex(signed) }
}
