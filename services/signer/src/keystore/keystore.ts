import { randomBytes } from 'node:crypto'
import { chmodSync, closeSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, statSync, writeSync } from 'node:fs'
import path from 'node:path'
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js'
import { privateKeyToAccount } from 'viem/accounts'
import type { RingKey } from '../signing/keyRing.js'
import { decryptKey, encryptKey, KeyFileError, parseKeyFile, type KeyFile, type ScryptParams } from './keyFile.js'

export interface KeyEntry {
  address: string
  label: string | null
  dev: boolean
  file: string
}

export class KeystoreError extends Error {
  override name = 'KeystoreError'
}

/**
 * A directory of key files (0700, files 0600). Listing reads only the public
 * header fields; decrypted keys exist only in the objects unlockAll returns.
 */
export class Keystore {
  constructor(readonly dir: string) {}

  ensureDir(): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 })
    if ((statSync(this.dir).mode & 0o077) !== 0) chmodSync(this.dir, 0o700)
  }

  private files(): string[] {
    try {
      return readdirSync(this.dir)
        .filter((f) => /^0x[0-9a-f]{40}\.json$/.test(f))
        .sort()
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return []
      throw err
    }
  }

  private read(name: string): KeyFile {
    const file = path.join(this.dir, name)
    return parseKeyFile(readFileSync(file, 'utf8'), file)
  }

  list(): KeyEntry[] {
    return this.files().map((name) => {
      const k = this.read(name)
      return { address: k.address, label: k.label ?? null, dev: k.dev === true, file: path.join(this.dir, name) }
    })
  }

  /** Encrypts and writes atomically: temp file (0600, exclusive), fsync, rename, fsync the directory. */
  async save(privateKeyHex: string, passphrase: string, opts: { label?: string; dev?: boolean; scrypt?: ScryptParams } = {}): Promise<KeyEntry> {
    if (!/^0x[0-9a-fA-F]{64}$/.test(privateKeyHex)) throw new KeystoreError('a private key is 0x followed by 64 hex characters')
    const address = privateKeyToAccount(privateKeyHex as `0x${string}`).address
    this.ensureDir()
    const name = `${address.toLowerCase()}.json`
    const target = path.join(this.dir, name)
    if (this.files().includes(name)) throw new KeystoreError(`a key for ${address} already exists (${target})`)
    const secret = hexToBytes(privateKeyHex.slice(2))
    let keyFile: KeyFile
    try {
      keyFile = await encryptKey(secret, address, passphrase, opts)
    } finally {
      secret.fill(0)
    }
    const temp = path.join(this.dir, `.${name}.${bytesToHex(randomBytes(6))}.tmp`)
    const fd = openSync(temp, 'wx', 0o600)
    try {
      writeSync(fd, JSON.stringify(keyFile, null, 2) + '\n')
      fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
    renameSync(temp, target)
    const dirFd = openSync(this.dir, 'r')
    try {
      fsyncSync(dirFd)
    } finally {
      closeSync(dirFd)
    }
    return { address, label: keyFile.label ?? null, dev: keyFile.dev === true, file: target }
  }

  /** Decrypts every key; the first that fails stops with an error naming it. */
  async unlockAll(passphrase: string): Promise<RingKey[]> {
    const keys: RingKey[] = []
    for (const name of this.files()) {
      const file = path.join(this.dir, name)
      const k = this.read(name)
      const secret = await decryptKey(k, passphrase, file)
      try {
        const account = privateKeyToAccount(`0x${bytesToHex(secret)}`)
        if (account.address.toLowerCase() !== k.address.toLowerCase()) {
          throw new KeyFileError(`key file ${file} holds a key for ${account.address}, not ${k.address}`)
        }
        keys.push({ address: account.address, account, label: k.label ?? null, dev: k.dev === true })
      } finally {
        secret.fill(0)
      }
    }
    return keys
  }
}
