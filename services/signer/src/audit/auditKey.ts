import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto'
import { closeSync, constants, fchmodSync, fsyncSync, openSync, renameSync, writeSync } from 'node:fs'
import path from 'node:path'
import { AUDIT_PRIVATE_KEY_FILE, AUDIT_PUBLIC_KEY_FILE, auditKeyFingerprint, AuditKeyError, readOwnFile } from '@countersign/shared'
import { createFileAtomic, FileExistsError } from '../keystore/atomicWrite.js'

export interface AuditKey {
  privateKey: KeyObject
  publicKey: KeyObject
  /** PEM of the public key, as in audit-key.pub. */
  publicPem: string
  fingerprint: string
  /** True when this start generated it. */
  created: boolean
}

/**
 * The signer's audit key (Ed25519): DATA_DIR/audit-key, 0600, generated at
 * first start; its public half in DATA_DIR/audit-key.pub (0600 like every
 * key file; an operator reads it as the signer's user or root). Only the
 * signer reads the private key: in the one-user-per-process layout the other
 * processes cannot, so they cannot make a checkpoint.
 */
export function loadOrCreateAuditKey(dataDir: string): AuditKey {
  const file = path.join(dataDir, AUDIT_PRIVATE_KEY_FILE)
  let created = false
  // The file itself, never a link to a key elsewhere; group and other bits are cleared on it.
  const readKey = () => readOwnFile(file, { maxBytes: 64 * 1024, privateMode: true, refuse: (message) => new AuditKeyError(message) })?.toString('utf8') ?? null
  let pem = readKey()
  if (pem === null) {
    const { privateKey } = generateKeyPairSync('ed25519')
    try {
      createFileAtomic(dataDir, AUDIT_PRIVATE_KEY_FILE, privateKey.export({ type: 'pkcs8', format: 'pem' }) as string, 0o600)
      created = true
    } catch (e) {
      // Another signer process created it first: use theirs.
      if (!(e instanceof FileExistsError)) throw e
    }
    pem = readKey()
    if (pem === null) throw new AuditKeyError(`${file} disappeared while it was being created`)
  }
  let privateKey: KeyObject
  try {
    privateKey = createPrivateKey(pem)
  } catch (err) {
    throw new AuditKeyError(`${file} is not a PEM private key (${(err as Error).message})`)
  }
  if (privateKey.asymmetricKeyType !== 'ed25519') throw new AuditKeyError(`${file} is not an Ed25519 key (${privateKey.asymmetricKeyType})`)
  const publicKey = createPublicKey(privateKey)
  const publicPem = publicKey.export({ type: 'spki', format: 'pem' }) as string
  writePublicHalf(path.join(dataDir, AUDIT_PUBLIC_KEY_FILE), publicPem)
  return { privateKey, publicKey, publicPem, fingerprint: auditKeyFingerprint(publicKey), created }
}

/** (Re)writes audit-key.pub when missing or not the key's public half: a temp file renamed over it. */
function writePublicHalf(file: string, publicPem: string): void {
  let current: string | null = null
  try {
    current = readOwnFile(file, { maxBytes: 64 * 1024, privateMode: true, refuse: (message) => new AuditKeyError(message) })?.toString('utf8') ?? null
  } catch {
    // a link, or not a regular file: replaced below by the rename
  }
  if (current === publicPem) return
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`
  // Created exclusively and never through a link: a name planted beforehand makes this fail, not write elsewhere.
  const fd = openSync(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600)
  try {
    fchmodSync(fd, 0o600)
    writeSync(fd, publicPem)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
  renameSync(temp, file)
}
