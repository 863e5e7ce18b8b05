import { getAddress } from 'viem'

/**
 * The key file format (version 2), one JSON file per key, named
 * `<lowercase address>.json`:
 *
 *   kdf     scrypt(NFKC(passphrase), salt, N, r, p) -> 32-byte key
 *   cipher  AES-256-GCM(key, nonce) over the 32 private-key bytes, with
 *           keyFileAssociatedData (the lowercase address, `dev` and `label`)
 *           as associated data: a ciphertext copied into another address's
 *           file does not decrypt, nor does a file whose `dev` or `label` was
 *           edited; `ciphertext` is the 32 encrypted bytes followed by the
 *           16-byte tag.
 *
 * Everything but the ciphertext is public: listing reads only these headers.
 * Version 1 bound only the address, so its `dev` flag could be deleted from
 * the file and a dev key would sign for every chain. Version 1 files are
 * still read (to list them, to check a passphrase, and by `countersign-keys
 * reseal`, which rewrites them as version 2), but the signer does not unlock
 * them (Keystore.unlockAll). A version 2 file edited back to version 1 does
 * not decrypt: its tag covers the version 2 associated data.
 */
export interface KeyFile {
  version: KeyFileVersion
  /** EIP-55 checksummed. */
  address: string
  kdf: { name: 'scrypt'; N: number; r: number; p: number; salt: string; dkLen: 32 }
  cipher: { name: 'aes-256-gcm'; nonce: string; ciphertext: string }
  /** ISO 8601, UTC. */
  createdAt: string
  label?: string
  /** A throwaway development key: may only sign for the local chain. */
  dev?: boolean
}

/** The version every new or resealed file is written in. */
export const KEY_FILE_VERSION = 2
export type KeyFileVersion = 1 | 2

/**
 * The AES-GCM associated data of a key file: for version 2 the address, the
 * dev flag and the label, as fixed-order JSON after a domain string (an
 * absent `dev` is false, an absent label null, as the signer reads them);
 * for version 1 the lowercase address alone.
 */
export function keyFileAssociatedData(keyFile: Pick<KeyFile, 'version' | 'address' | 'dev' | 'label'>): Uint8Array {
  const address = keyFile.address.toLowerCase()
  if (keyFile.version === 1) return new TextEncoder().encode(address)
  return new TextEncoder().encode(`countersign key file v2\n${JSON.stringify({ address, dev: keyFile.dev === true, label: keyFile.label ?? null })}`)
}

export interface ScryptParams {
  N: number
  r: number
  p: number
}

/** Files weaker than this are refused. */
export const MIN_SCRYPT_N = 2 ** 14
/** Beyond these a file is refused as absurd: 128·N·r bytes of memory, N·r·p work. */
export const MAX_SCRYPT_N = 2 ** 20
export const MAX_SCRYPT_MEMORY = 1024 * 1024 * 1024
export const MAX_SCRYPT_WORK = 2 ** 24
export const SALT_BYTES = 32
export const NONCE_BYTES = 12
export const PRIVATE_KEY_BYTES = 32
export const TAG_BYTES = 16
export const MAX_LABEL_LENGTH = 128
/** Key files are a few hundred bytes; anything far larger is not one. */
export const MAX_KEY_FILE_BYTES = 16 * 1024

/** Why these scrypt parameters are refused, or null when they are acceptable. */
export function scryptParamsProblem({ N, r, p }: ScryptParams): string | null {
  if (!Number.isSafeInteger(N) || N < MIN_SCRYPT_N || N > MAX_SCRYPT_N || (N & (N - 1)) !== 0) {
    return `N = ${N} (must be a power of two from 2^14 to 2^20)`
  }
  if (!Number.isSafeInteger(r) || r < 1 || r > 32) return `r = ${r} (must be 1 to 32)`
  if (!Number.isSafeInteger(p) || p < 1 || p > 16) return `p = ${p} (must be 1 to 16)`
  if (128 * N * r > MAX_SCRYPT_MEMORY) return `N = ${N}, r = ${r} (needs more than 1 GiB)`
  if (N * r * p > MAX_SCRYPT_WORK) return `N = ${N}, r = ${r}, p = ${p} (too slow to open)`
  return null
}

/** Why this label is refused, or null. Labels are printed on terminals: no control or format characters. */
export function labelProblem(label: string): string | null {
  if (label.length === 0) return 'a label may not be empty'
  if (label.length > MAX_LABEL_LENGTH) return `a label has at most ${MAX_LABEL_LENGTH} characters`
  if (/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u.test(label)) return 'a label may not contain control characters'
  return null
}

/**
 * A label as printed on a terminal or in a log: every character labelProblem
 * refuses shown as its escape (\u001b), for labels that were never checked by
 * it (a PKCS#11 object's CKA_LABEL, which anyone who can open the token may
 * set).
 */
export function printableLabel(label: string): string {
  return label.replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu, (c) => {
    const cp = c.codePointAt(0)!
    return cp > 0xffff ? `\\u{${cp.toString(16)}}` : `\\u${cp.toString(16).padStart(4, '0')}`
  })
}

export const keyFileName = (address: string): string => `${address.toLowerCase()}.json`

/** The name pattern of key files in a keystore directory. */
export const KEY_FILE_NAME = /^0x[0-9a-f]{40}\.json$/

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?Z$/

type Obj = Record<string, unknown>
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v)
const isHex = (v: unknown, bytes: number): v is string => typeof v === 'string' && v.length === bytes * 2 && /^[0-9a-f]*$/.test(v)

/** Problems with one object's keys: missing required ones, unknown ones. */
function keysProblem(obj: Obj, where: string, required: string[], optional: string[] = []): string | null {
  const missing = required.filter((k) => !(k in obj))
  if (missing.length > 0) return `${where} lacks ${missing.join(', ')}`
  const unknown = Object.keys(obj).filter((k) => !required.includes(k) && !optional.includes(k))
  if (unknown.length > 0) return `${where} has unknown field(s) ${unknown.join(', ')}`
  return null
}

/** Why this parsed JSON is not a key file (version 1 or 2), or null. */
export function keyFileProblem(json: unknown): string | null {
  if (!isObject(json)) return 'it is not a JSON object'
  const top = keysProblem(json, 'the file', ['version', 'address', 'kdf', 'cipher', 'createdAt'], ['label', 'dev'])
  if (top) return top
  if (json.version !== 1 && json.version !== 2) return `version ${JSON.stringify(json.version)} is not supported (expected 2, or 1 to reseal)`
  const { address, kdf, cipher, createdAt, label, dev } = json
  if (typeof address !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(address)) return 'address is not a 0x-address'
  if (getAddress(address) !== address) return 'address is not EIP-55 checksummed'
  if (!isObject(kdf)) return 'kdf is not an object'
  const kdfKeys = keysProblem(kdf, 'kdf', ['name', 'N', 'r', 'p', 'salt', 'dkLen'])
  if (kdfKeys) return kdfKeys
  if (kdf.name !== 'scrypt') return `kdf.name ${JSON.stringify(kdf.name)} is not supported (expected "scrypt")`
  if (typeof kdf.N !== 'number' || typeof kdf.r !== 'number' || typeof kdf.p !== 'number') return 'kdf.N, kdf.r and kdf.p must be numbers'
  const params = scryptParamsProblem({ N: kdf.N, r: kdf.r, p: kdf.p })
  if (params) return `unsafe or absurd scrypt parameters: ${params}`
  if (!isHex(kdf.salt, SALT_BYTES)) return `kdf.salt must be ${SALT_BYTES} bytes of lowercase hex`
  if (kdf.dkLen !== 32) return 'kdf.dkLen must be 32'
  if (!isObject(cipher)) return 'cipher is not an object'
  const cipherKeys = keysProblem(cipher, 'cipher', ['name', 'nonce', 'ciphertext'])
  if (cipherKeys) return cipherKeys
  if (cipher.name !== 'aes-256-gcm') return `cipher.name ${JSON.stringify(cipher.name)} is not supported (expected "aes-256-gcm")`
  if (!isHex(cipher.nonce, NONCE_BYTES)) return `cipher.nonce must be ${NONCE_BYTES} bytes of lowercase hex`
  if (!isHex(cipher.ciphertext, PRIVATE_KEY_BYTES + TAG_BYTES)) {
    return `cipher.ciphertext must be ${PRIVATE_KEY_BYTES + TAG_BYTES} bytes of lowercase hex (key and tag)`
  }
  if (typeof createdAt !== 'string' || !ISO_UTC.test(createdAt) || Number.isNaN(Date.parse(createdAt))) {
    return 'createdAt is not an ISO 8601 UTC time'
  }
  if (label !== undefined) {
    if (typeof label !== 'string') return 'label is not a string'
    const problem = labelProblem(label)
    if (problem) return problem.replace('a label', 'label')
  }
  if (dev !== undefined && typeof dev !== 'boolean') return 'dev is not a boolean'
  return null
}

/** Parses and validates a key file's text; the error is a sentence naming no secret. */
export function parseKeyFile(text: string): { ok: true; keyFile: KeyFile } | { ok: false; problem: string } {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return { ok: false, problem: 'it is not valid JSON' }
  }
  const problem = keyFileProblem(json)
  return problem ? { ok: false, problem } : { ok: true, keyFile: json as KeyFile }
}

export function serializeKeyFile(keyFile: KeyFile): string {
  return JSON.stringify(keyFile, null, 2) + '\n'
}
