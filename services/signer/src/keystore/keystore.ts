import { closeSync, constants, existsSync, fstatSync, openSync, readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { makePrivateDir } from '@countersign/shared'
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js'
import { privateKeyToAccount } from 'viem/accounts'
import { signingKeyOf, type SigningKey } from '../signing/secp256k1.js'
import { createFileAtomic, FileExistsError, isTempName, replaceFileAtomic } from './atomicWrite.js'
import { DecryptionError, openPrivateKey, sealPrivateKey } from './crypto.js'
import { KeyFileError, KeystoreError, KeystoreUnlockError } from './errors.js'
import { KEY_FILE_NAME, keyFileName, labelProblem, MAX_KEY_FILE_BYTES, parseKeyFile, serializeKeyFile, type KeyFile, type KeyFileVersion, type ScryptParams } from './format.js'

/** What listing shows: public header fields only. */
export interface KeyEntry {
  address: string
  label: string | null
  dev: boolean
  file: string
  /** 1: written before `dev` and `label` were sealed with the key; the signer refuses it until `countersign-keys reseal`. */
  version: KeyFileVersion
}

/** A decrypted key. The private key lives only inside `signingKey`'s closure, in this process's memory. */
export interface UnlockedKey extends KeyEntry {
  signingKey: SigningKey
}

export interface SaveOptions {
  label?: string
  dev?: boolean
  /** Tests only: cheaper scrypt parameters (still at least N = 2^14). Default DEFAULT_SCRYPT. */
  scrypt?: ScryptParams
  now?: Date
}

/**
 * A directory of key files (0700; files 0600), one per key, named
 * `<lowercase address>.json`. Listing reads only the public headers; the
 * decrypted keys exist only in the objects unlockAll returns.
 */
export class Keystore {
  constructor(readonly dir: string) {}

  /** Creates the directory 0700 (and missing parents), and tightens it if it is looser; refuses a link or another user's directory. */
  ensureDir(): void {
    // 0700, and never through a link or in another user's directory (makePrivateDir says why).
    makePrivateDir(this.dir)
  }

  /** Key file names, sorted; other files are not keys. A missing directory holds no keys. */
  private names(): string[] {
    let names: string[]
    try {
      names = readdirSync(this.dir)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return []
      throw err
    }
    const misnamed = names.find((n) => n.toLowerCase().endsWith('.json') && !isTempName(n) && !KEY_FILE_NAME.test(n))
    if (misnamed) {
      const file = path.join(this.dir, misnamed)
      throw new KeyFileError(file, `key file ${file} is misnamed: key files are named <lowercase 0x-address>.json`)
    }
    return names.filter((n) => KEY_FILE_NAME.test(n)).sort()
  }

  /** Reads and validates one key file; every failure is a KeyFileError naming the file. */
  private read(name: string): KeyFile {
    const file = path.join(this.dir, name)
    const result = parseKeyFile(readKeyFileText(file))
    if (!result.ok) throw new KeyFileError(file, `key file ${file} is malformed: ${result.problem}`)
    if (keyFileName(result.keyFile.address) !== name) {
      throw new KeyFileError(file, `key file ${file} holds the key for ${result.keyFile.address}, so it must be named ${keyFileName(result.keyFile.address)}`)
    }
    return result.keyFile
  }

  private entry(name: string, keyFile: KeyFile): KeyEntry {
    return { address: keyFile.address, label: keyFile.label ?? null, dev: keyFile.dev === true, file: path.join(this.dir, name), version: keyFile.version }
  }

  list(): KeyEntry[] {
    return this.names().map((name) => this.entry(name, this.read(name)))
  }

  /**
   * Encrypts a private key (0x-hex, or 32 bytes which are left to the caller
   * to zero) and writes it atomically as a new 0600 file. Refuses a second
   * file for the same address.
   */
  async save(privateKey: string | Uint8Array, passphrase: string, opts: SaveOptions = {}): Promise<KeyEntry> {
    if (opts.label !== undefined) {
      const problem = labelProblem(opts.label)
      if (problem) throw new KeystoreError(problem)
    }
    if (passphrase.length === 0) throw new KeystoreError('the passphrase may not be empty')
    const secret = privateKeyBytes(privateKey)
    try {
      const address = addressOf(secret)
      this.ensureDir()
      const name = keyFileName(address)
      const target = path.join(this.dir, name)
      if (existsSync(target)) throw new KeystoreError(`a key for ${address} already exists (${target})`)
      const keyFile = await sealPrivateKey(secret, address, passphrase, opts)
      try {
        createFileAtomic(this.dir, name, serializeKeyFile(keyFile), 0o600)
      } catch (err) {
        if (err instanceof FileExistsError) throw new KeystoreError(`a key for ${address} already exists (${target})`)
        throw err
      }
      return this.entry(name, keyFile)
    } finally {
      if (secret !== privateKey) secret.fill(0)
    }
  }

  /** The entry for an address (any case), or null when the keystore has no key for it. */
  find(address: string): KeyEntry | null {
    const name = keyFileName(address)
    if (!KEY_FILE_NAME.test(name) || !existsSync(path.join(this.dir, name))) return null
    return this.entry(name, this.read(name))
  }

  /**
   * Decrypts every key, in file-name order. The first that fails stops the
   * whole unlock with a KeystoreUnlockError naming its address and file.
   * Version 1 files are refused before any is decrypted (requireResealed).
   */
  async unlockAll(passphrase: string): Promise<UnlockedKey[]> {
    const names = this.names()
    const files = names.map((name) => this.read(name))
    this.requireResealed(names.map((name, i) => this.entry(name, files[i]!)))
    const keys: UnlockedKey[] = []
    for (const [i, name] of names.entries()) keys.push(await this.unlock(name, files[i]!, passphrase))
    return keys
  }

  /**
   * Refuses keys in version 1 files, in one line saying what to run. Their
   * `dev` flag is not sealed with the key: deleting it from a dev key's file
   * would let that key sign for every chain. Nothing in a version 1 file
   * tells an honest header from an edited one, so every such key waits for
   * the operator to reseal it (and see each key's dev flag as it does).
   */
  requireResealed(entries: KeyEntry[] = this.list()): void {
    const old = entries.filter((e) => e.version === 1)
    if (old.length === 0) return
    throw new KeystoreError(
      `${old.length} key file(s) in ${this.dir} (first ${old[0]!.file}) are format version 1, whose dev flag and label are not sealed with the key: run countersign-keys reseal once, with the keystore passphrase, to rewrite them as version 2`,
    )
  }

  /**
   * Rewrites every version 1 file as version 2 with the same key, address,
   * label, dev flag and creation time, each file replaced atomically. The key
   * must open with `passphrase`; a file that does not stops the reseal (files
   * already rewritten stay rewritten, which is safe: each is complete).
   * Returns the resealed entries.
   */
  async reseal(passphrase: string, opts: Pick<SaveOptions, 'scrypt'> = {}): Promise<KeyEntry[]> {
    const resealed: KeyEntry[] = []
    for (const name of this.names()) {
      const keyFile = this.read(name)
      if (keyFile.version !== 1) continue
      const file = path.join(this.dir, name)
      let secret: Uint8Array
      try {
        secret = await openPrivateKey(keyFile, passphrase)
      } catch (err) {
        if (err instanceof DecryptionError) throw new KeystoreUnlockError(keyFile.address, file)
        throw err
      }
      try {
        if (addressOf(secret) !== keyFile.address) throw new KeyFileError(file, `key file ${file} decrypts to the key of ${addressOf(secret)}, not ${keyFile.address}`)
        const sealed = await sealPrivateKey(secret, keyFile.address, passphrase, {
          ...(opts.scrypt ? { scrypt: opts.scrypt } : { scrypt: { N: keyFile.kdf.N, r: keyFile.kdf.r, p: keyFile.kdf.p } }),
          ...(keyFile.label !== undefined ? { label: keyFile.label } : {}),
          dev: keyFile.dev === true,
          now: new Date(keyFile.createdAt),
        })
        replaceFileAtomic(this.dir, name, serializeKeyFile(sealed), 0o600)
        resealed.push(this.entry(name, sealed))
      } finally {
        secret.fill(0)
      }
    }
    return resealed
  }

  /** unlockAll, keyed by lowercase address. */
  async unlockAllByAddress(passphrase: string): Promise<Map<string, UnlockedKey>> {
    return new Map((await this.unlockAll(passphrase)).map((k) => [k.address.toLowerCase(), k]))
  }

  /**
   * Checks that `passphrase` opens the keystore's first key (the signer opens
   * every key with one passphrase); true when the keystore is empty.
   */
  async passphraseOpensExistingKeys(passphrase: string): Promise<boolean> {
    const [name] = this.names()
    if (name === undefined) return true
    try {
      await this.unlock(name, this.read(name), passphrase)
      return true
    } catch (err) {
      if (err instanceof KeystoreUnlockError) return false
      throw err
    }
  }

  private async unlock(name: string, keyFile: KeyFile, passphrase: string): Promise<UnlockedKey> {
    const entry = this.entry(name, keyFile)
    let secret: Uint8Array
    try {
      secret = await openPrivateKey(keyFile, passphrase)
    } catch (err) {
      if (err instanceof DecryptionError) throw new KeystoreUnlockError(keyFile.address, entry.file)
      throw err
    }
    try {
      const signingKey = signingKeyOf(secret)
      if (signingKey.address !== keyFile.address) {
        throw new KeyFileError(entry.file, `key file ${entry.file} decrypts to the key of ${signingKey.address}, not ${keyFile.address}`)
      }
      return { ...entry, signingKey }
    } finally {
      secret.fill(0)
    }
  }
}

/** A private key given as 0x-hex (copied into new bytes) or as 32 bytes (used as is). */
function privateKeyBytes(privateKey: string | Uint8Array): Uint8Array {
  if (typeof privateKey === 'string') {
    if (!/^0x[0-9a-fA-F]{64}$/.test(privateKey)) throw new KeystoreError('a private key is 0x followed by 64 hex characters')
    return hexToBytes(privateKey.slice(2))
  }
  if (privateKey.length !== 32) throw new KeystoreError('a private key is 32 bytes')
  return privateKey
}

/** The checksummed address of a private key; the error never quotes the key. */
export function addressOfPrivateKey(privateKey: string | Uint8Array): string {
  const secret = privateKeyBytes(privateKey)
  try {
    return addressOf(secret)
  } finally {
    if (secret !== privateKey) secret.fill(0)
  }
}

function addressOf(secret: Uint8Array): string {
  try {
    return privateKeyToAccount(`0x${bytesToHex(secret)}`).address
  } catch {
    throw new KeystoreError('not a valid secp256k1 private key (zero, or not below the curve order)')
  }
}

/** A key file's text: a regular file (not a symlink) of sane size. */
function readKeyFileText(file: string): string {
  let fd: number
  try {
    // O_NONBLOCK: a FIFO named like a key file is refused below instead of waited on.
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    const why = code === 'ELOOP' ? 'is a symbolic link' : `cannot be opened (${code ?? (err as Error).message})`
    throw new KeyFileError(file, `key file ${file} ${why}`)
  }
  try {
    const stat = fstatSync(fd)
    if (!stat.isFile()) throw new KeyFileError(file, `key file ${file} is not a regular file`)
    if (stat.size > MAX_KEY_FILE_BYTES) throw new KeyFileError(file, `key file ${file} is too large to be a key file (${stat.size} bytes)`)
    return readFileSync(fd, 'utf8')
  } finally {
    closeSync(fd)
  }
}
