import { randomBytes, scrypt } from 'node:crypto'
import { scrypt as nobleScrypt } from '@noble/hashes/scrypt.js'
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js'
import { describe, expect, it } from 'vitest'
import { DecryptionError, DEFAULT_SCRYPT, deriveKey, openPrivateKey, scryptMaxmem, sealPrivateKey } from './crypto.js'
import { keyFileProblem } from './format.js'
import { ADDR_A, ADDR_B, FAST_SCRYPT, KEY_A } from './testkeys.testkit.js'

describe('key encryption', () => {
  it('seals to a valid key file and opens it again', async () => {
    const secret = hexToBytes(KEY_A.slice(2))
    const file = await sealPrivateKey(secret, ADDR_A, 'pass phrase', { scrypt: FAST_SCRYPT, label: 'ops', now: new Date(0) })
    expect(keyFileProblem(file)).toBeNull()
    expect(file).toMatchObject({ address: ADDR_A, label: 'ops', createdAt: '1970-01-01T00:00:00.000Z', kdf: { N: 2 ** 14, r: 8, p: 1, dkLen: 32 } })
    expect(JSON.stringify(file)).not.toContain(KEY_A.slice(2))
    expect(secret).toEqual(hexToBytes(KEY_A.slice(2))) // the caller's bytes are left alone
    expect(bytesToHex(await openPrivateKey(file, 'pass phrase'))).toBe(KEY_A.slice(2))
  })

  it('uses a fresh salt and nonce every time', async () => {
    const secret = hexToBytes(KEY_A.slice(2))
    const [a, b] = await Promise.all([sealPrivateKey(secret, ADDR_A, 'pw', { scrypt: FAST_SCRYPT }), sealPrivateKey(secret, ADDR_A, 'pw', { scrypt: FAST_SCRYPT })])
    expect(a!.kdf.salt).not.toBe(b!.kdf.salt)
    expect(a!.cipher.nonce).not.toBe(b!.cipher.nonce)
    expect(a!.cipher.ciphertext).not.toBe(b!.cipher.ciphertext)
  })

  it('fails on a wrong passphrase, another address (associated data), and any altered byte', async () => {
    const file = await sealPrivateKey(hexToBytes(KEY_A.slice(2)), ADDR_A, 'pw', { scrypt: FAST_SCRYPT })
    await expect(openPrivateKey(file, 'pW')).rejects.toThrow(DecryptionError)
    await expect(openPrivateKey({ ...file, address: ADDR_B }, 'pw')).rejects.toThrow(DecryptionError)
    const ct = file.cipher.ciphertext
    for (const at of [0, 63, 64, 95]) {
      const flipped = ct.slice(0, at) + (parseInt(ct[at]!, 16) ^ 8).toString(16) + ct.slice(at + 1)
      await expect(openPrivateKey({ ...file, cipher: { ...file.cipher, ciphertext: flipped } }, 'pw')).rejects.toThrow(DecryptionError)
    }
    const nonce = file.cipher.nonce
    await expect(openPrivateKey({ ...file, cipher: { ...file.cipher, nonce: (nonce[0] === '0' ? '1' : '0') + nonce.slice(1) } }, 'pw')).rejects.toThrow(DecryptionError)
  })

  it('normalises the passphrase (NFKC): composed and decomposed forms are the same passphrase', async () => {
    const file = await sealPrivateKey(hexToBytes(KEY_A.slice(2)), ADDR_A, 'caf\u00e9', { scrypt: FAST_SCRYPT })
    expect(bytesToHex(await openPrivateKey(file, 'cafe\u0301'))).toBe(KEY_A.slice(2))
  })

  it('refuses to derive with parameters a key file may not have', async () => {
    await expect(deriveKey('pw', new Uint8Array(32), { N: 2 ** 10, r: 8, p: 1 })).rejects.toThrow(/refusing scrypt parameters N = 1024/)
    await expect(sealPrivateKey(new Uint8Array(32).fill(1), ADDR_A, 'pw', { scrypt: { N: 2 ** 12, r: 8, p: 1 } })).rejects.toThrow(RangeError)
  })

  it('node:crypto scrypt agrees with @noble/hashes (the reference) on the same input', async () => {
    const salt = randomBytes(32)
    const ours = await deriveKey('pässwörd', salt, FAST_SCRYPT)
    expect(bytesToHex(ours)).toBe(bytesToHex(nobleScrypt('pässwörd'.normalize('NFKC'), salt, { ...FAST_SCRYPT, dkLen: 32 })))
  })

  it('raises maxmem just enough: N = 2^17 needs it (the 32 MiB default fails) and works with it', async () => {
    const salt = randomBytes(32)
    await expect(
      new Promise((resolve, reject) => scrypt('pw', salt, 32, { ...DEFAULT_SCRYPT }, (err, key) => (err ? reject(err) : resolve(key)))),
    ).rejects.toThrow(/memory limit exceeded/)
    expect(scryptMaxmem(DEFAULT_SCRYPT)).toBeLessThan(160 * 1024 * 1024)
    const started = performance.now()
    expect(await deriveKey('pw', salt, DEFAULT_SCRYPT)).toHaveLength(32)
    console.log(`scrypt N=2^17 r=8 p=1 (node:crypto): ${Math.round(performance.now() - started)} ms`)
  })

  it('does not block the event loop while deriving at N = 2^17 (it runs in the libuv pool)', async () => {
    let ticks = 0
    const timer = setInterval(() => ticks++, 10)
    await deriveKey('pw', randomBytes(32), DEFAULT_SCRYPT)
    clearInterval(timer)
    expect(ticks).toBeGreaterThan(5)
  })
})
