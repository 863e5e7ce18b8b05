import { randomBytes, scrypt as scryptCb } from 'node:crypto'
import { gcm } from '@noble/ciphers/aes.js'
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js'
import { createAjv, describeValidationErrors } from '@countersign/shared'

/**
 * One key per file: scrypt derives a 32-byte key from the passphrase,
 * AES-256-GCM encrypts the private key with a fresh 12-byte nonce, and the
 * lowercase address is the associated data, so a ciphertext copied into
 * another address's file does not decrypt.
 */
export interface KeyFile {
  version: 1
  address: string
  kdf: { name: 'scrypt'; N: number; r: number; p: number; salt: string; dkLen: 32 }
  cipher: { name: 'aes-256-gcm'; nonce: string; ciphertext: string }
  createdAt: string
  label?: string
  /** A throwaway development key: may only sign for the local chain. */
  dev?: boolean
}

export interface ScryptParams {
  N: number
  r: number
  p: number
}

/** N = 2^17 (128 MiB per derivation): about half a second here, far beyond what offline guessing wants. */
export const DEFAULT_SCRYPT: ScryptParams = { N: 2 ** 17, r: 8, p: 1 }
/** Files below this are refused when read; tests may write weaker files only by asking explicitly. */
export const MIN_SCRYPT_N = 2 ** 14

export class KeyFileError extends Error {
  override name = 'KeyFileError'
}

const hex = (n: number) => ({ type: 'string', pattern: `^[0-9a-f]{${n}}$` }) as const
const keyFileSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['version', 'address', 'kdf', 'cipher', 'createdAt'],
  properties: {
    version: { const: 1 },
    address: { type: 'string', pattern: '^0x[0-9a-fA-F]{40}$' },
    kdf: {
      type: 'object',
      additionalProperties: false,
      required: ['name', 'N', 'r', 'p', 'salt', 'dkLen'],
      properties: {
        name: { const: 'scrypt' },
        N: { type: 'integer', minimum: 2, maximum: 2 ** 22 },
        r: { type: 'integer', minimum: 1, maximum: 32 },
        p: { type: 'integer', minimum: 1, maximum: 16 },
        salt: hex(64),
        dkLen: { const: 32 },
      },
    },
    cipher: {
      type: 'object',
      additionalProperties: false,
      required: ['name', 'nonce', 'ciphertext'],
      properties: { name: { const: 'aes-256-gcm' }, nonce: hex(24), ciphertext: hex(96) },
    },
    createdAt: { type: 'string', maxLength: 64 },
    label: { type: 'string', maxLength: 128 },
    dev: { type: 'boolean' },
  },
} as const
const validateKeyFile = createAjv().compile<KeyFile>(keyFileSchema)

export function parseKeyFile(text: string, file: string): KeyFile {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    throw new KeyFileError(`key file ${file} is not valid JSON`)
  }
  if (!validateKeyFile(json)) throw new KeyFileError(`key file ${file} is malformed: ${describeValidationErrors(validateKeyFile.errors, 'key')}`)
  const { N } = json.kdf
  if (N < MIN_SCRYPT_N || (N & (N - 1)) !== 0) throw new KeyFileError(`key file ${file} has unsafe scrypt parameters (N = ${N})`)
  return json
}

/** node:crypto scrypt runs in libuv's pool, off the event loop; maxmem must cover 128·N·r. */
export function deriveKey(passphrase: string, salt: Uint8Array, params: ScryptParams): Promise<Uint8Array> {
  const maxmem = 128 * params.N * params.r * params.p + 32 * 1024 * 1024
  return new Promise((resolve, reject) => {
    scryptCb(passphrase.normalize('NFKC'), salt, 32, { N: params.N, r: params.r, p: params.p, maxmem }, (err, key) =>
      err ? reject(err) : resolve(new Uint8Array(key.buffer, key.byteOffset, key.byteLength)),
    )
  })
}

export async function encryptKey(
  privateKey: Uint8Array,
  address: string,
  passphrase: string,
  opts: { scrypt?: ScryptParams; label?: string; dev?: boolean; now?: Date } = {},
): Promise<KeyFile> {
  const params = opts.scrypt ?? DEFAULT_SCRYPT
  const salt = randomBytes(32)
  const nonce = randomBytes(12)
  const key = await deriveKey(passphrase, salt, params)
  try {
    const ciphertext = gcm(key, nonce, aad(address)).encrypt(privateKey)
    return {
      version: 1,
      address,
      kdf: { name: 'scrypt', ...params, salt: bytesToHex(salt), dkLen: 32 },
      cipher: { name: 'aes-256-gcm', nonce: bytesToHex(nonce), ciphertext: bytesToHex(ciphertext) },
      createdAt: (opts.now ?? new Date()).toISOString(),
      ...(opts.label ? { label: opts.label } : {}),
      ...(opts.dev ? { dev: true } : {}),
    }
  } finally {
    key.fill(0)
  }
}

/** The private key bytes; the caller zeroes them when done. Throws KeyFileError on a wrong passphrase or a tampered file. */
export async function decryptKey(file: KeyFile, passphrase: string, fileName: string): Promise<Uint8Array> {
  const key = await deriveKey(passphrase, hexToBytes(file.kdf.salt), file.kdf)
  try {
    return gcm(key, hexToBytes(file.cipher.nonce), aad(file.address)).decrypt(hexToBytes(file.cipher.ciphertext))
  } catch {
    throw new KeyFileError(`cannot unlock key ${file.address} (${fileName}): wrong passphrase or the file was altered`)
  } finally {
    key.fill(0)
  }
}

const aad = (address: string) => new TextEncoder().encode(address.toLowerCase())
