import { chmodSync, copyFileSync, mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { OperatorError } from '@countersign/shared'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hexToBytes, keccak256, parseSignature, recoverAddress, toHex } from 'viem'
import { generatePrivateKey, privateKeyToAccount, sign } from 'viem/accounts'
import { KeyUnavailableError, type KeyBackend } from '../signing/keyBackend.js'
import { SECP256K1_N } from './ecdsa.js'
import { openPkcs11Backend, verifiedTokenSignature } from './pkcs11Backend.js'
import { initSoftHsmToken, SOFTHSM_MODULE, type SoftHsmToken } from './softhsm.testkit.js'
import { generateTokenKey, initialize, listTokenKeys, loadModule, loadPkcs11Lib, login, slotOfToken, type Pkcs11Lib } from './token.js'

const HALF_N = SECP256K1_N / 2n
let token: SoftHsmToken
let lib: Pkcs11Lib
let backend: KeyBackend
let address: string

beforeAll(async () => {
  token = initSoftHsmToken()
  // SoftHSM reads its configuration at C_Initialize, from this process's environment (vitest runs each file in its own process).
  process.env.SOFTHSM2_CONF = token.env.SOFTHSM2_CONF
  lib = await loadPkcs11Lib()
  const pkcs11 = loadModule(lib, SOFTHSM_MODULE)
  initialize(lib, pkcs11)
  const session = pkcs11.C_OpenSession(slotOfToken(pkcs11, token.label), lib.CKF_SERIAL_SESSION | lib.CKF_RW_SESSION)
  login(lib, pkcs11, session, token.pin)
  const key = await generateTokenKey(lib, pkcs11, session, 'hot-wallet', Buffer.from('01', 'hex'))
  address = key.address
  await expect(generateTokenKey(lib, pkcs11, session, 'hot-wallet', Buffer.from('02', 'hex'))).rejects.toThrow(/already holds a key labelled "hot-wallet"/)
  // The private key's value and its extractability, as the token reports them to a logged-in user.
  expect(() => pkcs11.C_GetAttributeValue(session, key.handle, [{ type: lib.CKA_VALUE }])).toThrow(/CKR_ATTRIBUTE_SENSITIVE/)
  const [sensitive, extractable] = pkcs11.C_GetAttributeValue(session, key.handle, [{ type: lib.CKA_SENSITIVE }, { type: lib.CKA_EXTRACTABLE }])
  expect([sensitive!.value, extractable!.value]).toEqual([Buffer.from([1]), Buffer.from([0])])
  pkcs11.C_Finalize()
  pkcs11.close()
  backend = await openPkcs11Backend(lib, { modulePath: SOFTHSM_MODULE, tokenLabel: token.label, pin: token.pin, sessions: 4 })
})

afterAll(async () => {
  await backend?.close()
  rmSync(token.dir, { recursive: true, force: true })
})

describe('the PKCS#11 backend on a SoftHSM2 token', () => {
  it('finds the key by its label with the address of its public point', () => {
    expect(backend.keys().map((k) => ({ address: k.address, label: k.label, backend: k.backend, dev: k.dev }))).toEqual([{ address, label: 'hot-wallet', backend: 'pkcs11', dev: false }])
  })

  it('signs 200 digests at once over 4 sessions: every signature low-s and recovering to the key', async () => {
    const [key] = backend.keys()
    if (!key) throw new Error('the token shows no key')
    const digests = Array.from({ length: 200 }, (_, i) => keccak256(toHex(`digest ${i}`)))
    const results = await Promise.allSettled(digests.map((d) => key.signDigest(d)))
    expect(results.filter((r) => r.status === 'rejected')).toEqual([])
    const signatures = results.map((r) => (r as PromiseFulfilledResult<Awaited<ReturnType<typeof key.signDigest>>>).value)
    expect(signatures.every((s) => BigInt(s.s) <= HALF_N)).toBe(true)
    const recovered = await Promise.all(signatures.map((signature, i) => recoverAddress({ hash: digests[i]!, signature })))
    expect(new Set(recovered)).toEqual(new Set([address]))
  })

  it('refuses with KeyUnavailableError while the token is gone, and signs again once it is back', async () => {
    const [key] = backend.keys()
    const digest = keccak256('0xabcd')
    token.unplug()
    try {
      await expect(key!.signDigest(digest)).rejects.toThrow(KeyUnavailableError)
      await new Promise((r) => setTimeout(r, 300))
      await expect(key!.signDigest(digest)).rejects.toThrow(KeyUnavailableError)
    } finally {
      token.plugBack()
    }
    await new Promise((r) => setTimeout(r, 300))
    const signature = await key!.signDigest(digest)
    expect(await recoverAddress({ hash: digest, signature })).toBe(address)
  })

  it('a token removed while 100 signatures are under way: each one signs or is refused with KeyUnavailableError, and signing resumes', async () => {
    const [key] = backend.keys()
    const digests = Array.from({ length: 100 }, (_, i) => keccak256(toHex(`mid-run ${i}`)))
    const running = digests.map((d) => key!.signDigest(d))
    token.unplug()
    let results: PromiseSettledResult<Awaited<(typeof running)[number]>>[]
    try {
      results = await Promise.allSettled(running)
    } finally {
      token.plugBack()
    }
    const refused = results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason)
    expect(refused.length).toBeGreaterThan(0)
    expect(refused.every((e) => e instanceof KeyUnavailableError)).toBe(true)
    for (const [i, r] of results.entries()) if (r.status === 'fulfilled') expect(await recoverAddress({ hash: digests[i]!, signature: r.value })).toBe(address)
    await new Promise((r) => setTimeout(r, 300))
    const digest = keccak256('0xbeef')
    expect(await recoverAddress({ hash: digest, signature: await key!.signDigest(digest) })).toBe(address)
  })

  it('lists the same key through a fresh session, as the key CLI does', async () => {
    const pkcs11 = loadModule(lib, SOFTHSM_MODULE)
    initialize(lib, pkcs11)
    const session = pkcs11.C_OpenSession(slotOfToken(pkcs11, token.label), lib.CKF_SERIAL_SESSION)
    login(lib, pkcs11, session, token.pin)
    expect((await listTokenKeys(lib, pkcs11, session)).map((k) => k.address)).toEqual([address])
    pkcs11.close()
  })
})

describe('a token signature that does not verify against the key', () => {
  it('is a KeyUnavailableError (the signer refuses key_unavailable, audited), never a plain error the RPC layer turns into an internal error', async () => {
    const digest = keccak256('0x01')
    const own = privateKeyToAccount(generatePrivateKey())
    const { r, s } = parseSignature(await sign({ hash: digest, privateKey: generatePrivateKey(), to: 'hex' }))
    const raw = hexToBytes(`0x${r.slice(2)}${s.slice(2)}`)
    const failures: unknown[] = []
    const signing = verifiedTokenSignature(raw, digest, { address: own.address, publicPoint: hexToBytes(own.publicKey) }, 'countersign', (err) => failures.push(err))
    await expect(signing).rejects.toThrow(KeyUnavailableError)
    await expect(signing).rejects.toThrow(`the PKCS#11 token "countersign" gave a signature that does not verify against ${own.address}`)
    expect(failures).toHaveLength(1)
  })
})

describe('the PKCS#11 module file', () => {
  it('is not loaded from a directory others can write, where anyone could have put their own code in its place', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'cs-module-'))
    try {
      chmodSync(dir, 0o777)
      const planted = path.join(dir, 'libsofthsm2.so')
      copyFileSync(SOFTHSM_MODULE, planted)
      chmodSync(planted, 0o755)
      expect(() => loadModule(lib, planted)).toThrow(`SERVICE_PKCS11_MODULE ${planted}: the directory ${dir} is writable by group or others (mode 777), who could replace the module this process runs: run chmod go-w ${dir}`)
      await expect(openPkcs11Backend(lib, { modulePath: planted, tokenLabel: token.label, pin: token.pin, sessions: 1 })).rejects.toThrow(OperatorError)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
