import { chmodSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { DEFAULT_SCRYPT, KeyFileError } from './keyFile.js'
import { Keystore, KeystoreError } from './keystore.js'
import { PassphraseError, readPassphraseFile, resolvePassphrase } from './passphrase.js'

// Tests use N = 2^14 to stay fast; one test runs the production parameters.
const FAST = { N: 2 ** 14, r: 8, p: 1 }
const KEY_A = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80'
const ADDR_A = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266'
const KEY_B = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d'

const fresh = () => new Keystore(path.join(mkdtempSync(path.join(os.tmpdir(), 'cs-ks-')), 'keystore'))

describe('keystore', () => {
  it('round-trips a key; files 0600 in a 0700 directory; no temp files left; no key material in the file', async () => {
    const ks = fresh()
    const entry = await ks.save(KEY_A, 'pass phrase', { scrypt: FAST, label: 'ops' })
    expect(entry).toMatchObject({ address: ADDR_A, label: 'ops', dev: false })
    expect(statSync(ks.dir).mode & 0o777).toBe(0o700)
    expect(statSync(entry.file).mode & 0o777).toBe(0o600)
    expect(readdirSync(ks.dir)).toEqual([`${ADDR_A.toLowerCase()}.json`])
    expect(readFileSync(entry.file, 'utf8')).not.toContain(KEY_A.slice(2))
    const [k] = await ks.unlockAll('pass phrase')
    expect(k!.address).toBe(ADDR_A)
    expect(ks.list()).toEqual([{ address: ADDR_A, label: 'ops', dev: false, file: entry.file }])
  })

  it('uses N = 2^17 by default and that unlocks (production parameters)', async () => {
    const ks = fresh()
    const entry = await ks.save(KEY_A, 'pw')
    const file = JSON.parse(readFileSync(entry.file, 'utf8'))
    expect(file.kdf).toMatchObject({ name: 'scrypt', N: 2 ** 17, r: 8, p: 1, dkLen: 32 })
    expect(DEFAULT_SCRYPT.N).toBe(131072)
    const started = performance.now()
    await ks.unlockAll('pw')
    // Recorded in docs/operations.md; not asserted as a timing.
    console.log(`unlock at N=2^17: ${Math.round(performance.now() - started)} ms`)
  })

  it('a wrong passphrase names the key and its file', async () => {
    const ks = fresh()
    const entry = await ks.save(KEY_A, 'right', { scrypt: FAST })
    await expect(ks.unlockAll('wrong')).rejects.toThrow(KeyFileError)
    await expect(ks.unlockAll('wrong')).rejects.toThrow(`cannot unlock key ${ADDR_A} (${entry.file})`)
  })

  it('binds the ciphertext to the address: a ciphertext moved to another key file does not decrypt', async () => {
    const ks = fresh()
    const a = await ks.save(KEY_A, 'pw', { scrypt: FAST })
    const b = await ks.save(KEY_B, 'pw', { scrypt: FAST })
    const fa = JSON.parse(readFileSync(a.file, 'utf8'))
    const fb = JSON.parse(readFileSync(b.file, 'utf8'))
    chmodSync(b.file, 0o600)
    writeFileSync(b.file, JSON.stringify({ ...fb, kdf: fa.kdf, cipher: fa.cipher }))
    await expect(ks.unlockAll('pw')).rejects.toThrow(/cannot unlock key .*wrong passphrase or the file was altered/)
  })

  it('detects a tampered ciphertext', async () => {
    const ks = fresh()
    const a = await ks.save(KEY_A, 'pw', { scrypt: FAST })
    const f = JSON.parse(readFileSync(a.file, 'utf8'))
    const flipped = (parseInt(f.cipher.ciphertext[0], 16) ^ 1).toString(16) + f.cipher.ciphertext.slice(1)
    writeFileSync(a.file, JSON.stringify({ ...f, cipher: { ...f.cipher, ciphertext: flipped } }))
    await expect(ks.unlockAll('pw')).rejects.toThrow(KeyFileError)
  })

  it('refuses a second key for the same address, malformed files and weak parameters with clear errors', async () => {
    const ks = fresh()
    const a = await ks.save(KEY_A, 'pw', { scrypt: FAST })
    await expect(ks.save(KEY_A, 'pw', { scrypt: FAST })).rejects.toThrow(KeystoreError)
    await expect(ks.save('0x1234', 'pw')).rejects.toThrow(/64 hex/)
    const f = JSON.parse(readFileSync(a.file, 'utf8'))
    writeFileSync(a.file, JSON.stringify({ ...f, kdf: { ...f.kdf, N: 1024 } }))
    expect(() => ks.list()).toThrow(/unsafe scrypt parameters/)
    writeFileSync(a.file, '{"version": 1')
    expect(() => ks.list()).toThrow(`key file ${a.file} is not valid JSON`)
    writeFileSync(a.file, JSON.stringify({ ...f, extra: 1 }))
    expect(() => ks.list()).toThrow(/is malformed/)
  })
})

describe('passphrase sources', () => {
  const tty = { isTTY: false } as unknown as NodeJS.ReadStream
  const sink = { write: () => true } as unknown as NodeJS.WritableStream

  it('prefers SERVICE_DEMO_PASSPHRASE, then SERVICE_PASSPHRASE_FILE', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'cs-pass-'))
    const file = path.join(dir, 'pass')
    writeFileSync(file, 'from file\n', { mode: 0o600 })
    expect(await resolvePassphrase({ env: { SERVICE_DEMO_PASSPHRASE: 'demo', SERVICE_PASSPHRASE_FILE: file }, stdin: tty, stderr: sink })).toBe('demo')
    expect(await resolvePassphrase({ env: { SERVICE_PASSPHRASE_FILE: file }, stdin: tty, stderr: sink })).toBe('from file')
  })

  it('refuses a passphrase file readable by others, and says how to give one when there is none', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'cs-pass-'))
    const file = path.join(dir, 'pass')
    writeFileSync(file, 'secret', { mode: 0o644 })
    chmodSync(file, 0o644)
    expect(() => readPassphraseFile(file)).toThrow(/readable by group or others \(mode 644\)/)
    await expect(resolvePassphrase({ env: {}, stdin: tty, stderr: sink })).rejects.toThrow(PassphraseError)
    await expect(resolvePassphrase({ env: {}, stdin: tty, stderr: sink })).rejects.toThrow(/SERVICE_PASSPHRASE_FILE/)
  })
})
