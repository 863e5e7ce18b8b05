import { randomBytes, scrypt } from 'node:crypto'
import { gcm } from '@noble/ciphers/aes.js'
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js'
import { KEY_FILE_VERSION, keyFileAssociatedData, NONCE_BYTES, PRIVATE_KEY_BYTES, SALT_BYTES, scryptParamsProblem, type KeyFile, type ScryptParams } from './format.js'

/**
 * Production parameters: N = 2^17, r = 8, p = 1 (128 MiB per derivation).
 *
 * Implementation: node:crypto `scrypt` (OpenSSL), which runs in libuv's thread
 * pool, off the event loop. Measured here (Node 20.20, 2 vCPU, N = 2^17, r = 8,
 * p = 1, two series of 5 runs each): node:crypto 582–648 ms (median 644) and
 * 478–523 ms (median 501, per key through Keystore.unlockAll, 4 keys);
 * @noble/hashes 2.4.0 `scryptAsync` 1,067–1,516 ms (median 1,345) and
 * 932–1,263 ms (median 1,138), computed on the main thread in slices.
 * node:crypto is about twice as fast, so it is the one used.
 */
export const DEFAULT_SCRYPT: ScryptParams = { N: 2 ** 17, r: 8, p: 1 }

/**
 * OpenSSL refuses a derivation whose memory, 128·r·(N + 2) + 128·r·p bytes,
 * exceeds `maxmem` (default 32 MiB, so anything above N = 2^14 at r = 8 fails
 * by default). A 16 MiB margin on top of the exact figure.
 */
export function scryptMaxmem({ N, r, p }: ScryptParams): number {
  return 128 * r * (N + 2) + 128 * r * p + 16 * 1024 * 1024
}

export class DecryptionError extends Error {
  override name = 'DecryptionError'
}

/** scrypt over the NFKC-normalised passphrase; the caller zeroes the result. */
export function deriveKey(passphrase: string, salt: Uint8Array, params: ScryptParams): Promise<Uint8Array> {
  const problem = scryptParamsProblem(params)
  if (problem) return Promise.reject(new RangeError(`refusing scrypt parameters ${problem}`))
  return new Promise((resolve, reject) => {
    scrypt(passphrase.normalize('NFKC'), salt, 32, { N: params.N, r: params.r, p: params.p, maxmem: scryptMaxmem(params) }, (err, key) =>
      err ? reject(err) : resolve(new Uint8Array(key.buffer, key.byteOffset, key.byteLength)),
    )
  })
}

export interface SealOptions {
  scrypt?: ScryptParams
  label?: string
  dev?: boolean
  now?: Date
}

/**
 * Encrypts a 32-byte private key for `address` (checksummed; the caller has
 * derived it from the key) into a version 2 file, whose associated data
 * binds the address, `dev` and `label`. Does not modify or zero `privateKey`.
 */
export async function sealPrivateKey(privateKey: Uint8Array, address: string, passphrase: string, opts: SealOptions = {}): Promise<KeyFile> {
  if (privateKey.length !== PRIVATE_KEY_BYTES) throw new RangeError(`a private key is ${PRIVATE_KEY_BYTES} bytes`)
  const params = opts.scrypt ?? DEFAULT_SCRYPT
  const salt = randomBytes(SALT_BYTES)
  const nonce = randomBytes(NONCE_BYTES)
  const key = await deriveKey(passphrase, salt, params)
  try {
    const header = {
      version: KEY_FILE_VERSION,
      address,
      ...(opts.label !== undefined ? { label: opts.label } : {}),
      ...(opts.dev ? { dev: true } : {}),
    } as const
    const ciphertext = gcm(key, nonce, keyFileAssociatedData(header)).encrypt(privateKey)
    return {
      version: KEY_FILE_VERSION,
      address,
      kdf: { name: 'scrypt', N: params.N, r: params.r, p: params.p, salt: bytesToHex(salt), dkLen: 32 },
      cipher: { name: 'aes-256-gcm', nonce: bytesToHex(nonce), ciphertext: bytesToHex(ciphertext) },
      createdAt: (opts.now ?? new Date()).toISOString(),
      ...(opts.label !== undefined ? { label: opts.label } : {}),
      ...(opts.dev ? { dev: true } : {}),
    }
  } finally {
    key.fill(0)
  }
}

/**
 * The private key bytes of a validated key file; the caller zeroes them when
 * done. Throws DecryptionError on a wrong passphrase or an altered file,
 * its address, dev flag or label included (GCM cannot tell the two apart).
 */
export async function openPrivateKey(keyFile: KeyFile, passphrase: string): Promise<Uint8Array> {
  const key = await deriveKey(passphrase, hexToBytes(keyFile.kdf.salt), keyFile.kdf)
  try {
    return gcm(key, hexToBytes(keyFile.cipher.nonce), keyFileAssociatedData(keyFile)).decrypt(hexToBytes(keyFile.cipher.ciphertext))
  } catch {
    throw new DecryptionError('wrong passphrase, or the file was altered')
  } finally {
    key.fill(0)
  }
}
