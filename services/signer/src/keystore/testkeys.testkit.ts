import { randomBytes } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { gcm } from '@noble/ciphers/aes.js'
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js'
import { deriveKey } from './crypto.js'
import type { Keystore } from './keystore.js'

// Well-known anvil/hardhat development keys (public knowledge; never fund them on a real chain).
export const KEY_A = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80'
export const ADDR_A = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266'
export const KEY_B = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d'
export const ADDR_B = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8'
export const KEY_C = '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a'
export const ADDR_C = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC'
/** The cheapest parameters a key file may have: tests use them to stay fast. */
export const FAST_SCRYPT = { N: 2 ** 14, r: 8, p: 1 }

/** A key file as versions before 2 wrote it: AES-GCM associated data the lowercase address only. */
export async function writeVersion1(ks: Keystore, privateKey: string, address: string, passphrase: string, header: { label?: string; dev?: boolean } = {}): Promise<string> {
  ks.ensureDir()
  const salt = randomBytes(32)
  const nonce = randomBytes(12)
  const key = await deriveKey(passphrase, salt, FAST_SCRYPT)
  const ciphertext = gcm(key, nonce, new TextEncoder().encode(address.toLowerCase())).encrypt(hexToBytes(privateKey.slice(2)))
  const file = path.join(ks.dir, `${address.toLowerCase()}.json`)
  writeFileSync(
    file,
    JSON.stringify({
      version: 1,
      address,
      kdf: { name: 'scrypt', ...FAST_SCRYPT, salt: bytesToHex(salt), dkLen: 32 },
      cipher: { name: 'aes-256-gcm', nonce: bytesToHex(nonce), ciphertext: bytesToHex(ciphertext) },
      createdAt: '2025-06-01T00:00:00.000Z',
      ...header,
    }),
    { mode: 0o600 },
  )
  return file
}
