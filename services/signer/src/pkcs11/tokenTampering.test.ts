// What someone who can open the token but does not know the PIN can do to it
// (a member of the softhsm group, a USB token that allows R/W public
// sessions): create and destroy objects with CKA_PRIVATE=false. Each attack
// runs through pkcs11js on a real SoftHSM2 token in a session that never
// logs in, then the signer's backend and the key CLI open the token as usual.
import { rmSync } from 'node:fs'
import { Readable, Writable } from 'node:stream'
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { keccak256, recoverAddress, toHex } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { runKeysCli } from '../cli/keys.js'
import type { InputStream } from '../keystore/passphrase.js'
import { openPkcs11Backend } from './pkcs11Backend.js'
import { SECP256K1_EC_PARAMS } from './ecPoint.js'
import { initSoftHsmToken, SOFTHSM_MODULE, type SoftHsmToken } from './softhsm.testkit.js'
import { generateTokenKey, initialize, loadModule, loadPkcs11Lib, login, slotOfToken, type Handle, type Pkcs11, type Pkcs11Lib, type TokenKey } from './token.js'

let lib: Pkcs11Lib
let token: SoftHsmToken
let treasury: TokenKey
let logged: { msg: string; fields: Record<string, unknown> }[]

/** The attacker's key: they know its private value. */
const ATTACKER_KEY = `0x${'22'.repeat(32)}` as const
const attacker = privateKeyToAccount(ATTACKER_KEY)
const attackerPoint = Buffer.concat([Buffer.from([0x04, 0x41]), Buffer.from(attacker.publicKey.slice(2), 'hex')])
const params = Buffer.from(SECP256K1_EC_PARAMS)

/** Runs `work` in a session on the token; logged in only with `pin`. */
async function onToken<T>(pin: string | null, work: (p: Pkcs11, s: Handle) => T | Promise<T>): Promise<T> {
  const p = loadModule(lib, SOFTHSM_MODULE)
  try {
    initialize(lib, p)
    const s = p.C_OpenSession(slotOfToken(p, token.label), lib.CKF_SERIAL_SESSION | lib.CKF_RW_SESSION)
    if (pin !== null) login(lib, p, s, pin)
    return await work(p, s)
  } finally {
    p.C_Finalize()
    p.close()
  }
}

const publicKeyTemplate = (id: Buffer) => [
  { type: lib.CKA_CLASS, value: lib.CKO_PUBLIC_KEY },
  { type: lib.CKA_KEY_TYPE, value: lib.CKK_EC },
  { type: lib.CKA_TOKEN, value: true },
  { type: lib.CKA_PRIVATE, value: false },
  { type: lib.CKA_ID, value: id },
  { type: lib.CKA_EC_PARAMS, value: params },
  { type: lib.CKA_EC_POINT, value: attackerPoint },
]

/** The reviewer's plant: a private key of the attacker's choosing, CKA_PRIVATE=false, with its public half. */
async function plantPrivateKey(label: string): Promise<void> {
  await onToken(null, (p, s) => {
    p.C_CreateObject(s, [
      { type: lib.CKA_CLASS, value: lib.CKO_PRIVATE_KEY },
      { type: lib.CKA_KEY_TYPE, value: lib.CKK_EC },
      { type: lib.CKA_TOKEN, value: true },
      { type: lib.CKA_PRIVATE, value: false },
      { type: lib.CKA_SIGN, value: true },
      { type: lib.CKA_LABEL, value: label },
      { type: lib.CKA_ID, value: Buffer.from('bb', 'hex') },
      { type: lib.CKA_EC_PARAMS, value: params },
      { type: lib.CKA_VALUE, value: Buffer.from(ATTACKER_KEY.slice(2), 'hex') },
    ])
    p.C_CreateObject(s, publicKeyTemplate(Buffer.from('bb', 'hex')))
  })
}

const openBackend = () =>
  openPkcs11Backend(lib, { modulePath: SOFTHSM_MODULE, tokenLabel: token.label, pin: token.pin, sessions: 2, log: (msg, fields = {}) => logged.push({ msg, fields }) })

async function keysCli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = ''
  let err = ''
  const io = {
    env: { ...token.env },
    stdin: Object.assign(Readable.from([]), { isTTY: false }) as InputStream,
    stdout: new Writable({ write: (c, _e, cb) => ((out += c), cb()) }),
    stderr: new Writable({ write: (c, _e, cb) => ((err += c), cb()) }),
  }
  const code = await runKeysCli([...args, '--data-dir', token.dir], io)
  return { code, out, err }
}

beforeAll(async () => {
  lib = await loadPkcs11Lib()
})

beforeEach(async () => {
  token = initSoftHsmToken()
  // SoftHSM reads its configuration at C_Initialize, from this process's environment.
  process.env.SOFTHSM2_CONF = token.env.SOFTHSM2_CONF
  logged = []
  treasury = await onToken(token.pin, (p, s) => generateTokenKey(lib, p, s, 'treasury', Buffer.from('aa', 'hex')))
})

afterEach(() => rmSync(token.dir, { recursive: true, force: true }))

describe('a PKCS#11 token tampered with by someone without the PIN', () => {
  it("(a) a key's public half replaced under its CKA_ID: neither the signer nor the CLI announces the attacker's address", async () => {
    // A key made before its public half was generated private (CKA_PRIVATE=false), as older versions did.
    const legacy = await onToken(token.pin, (p, s) => {
      const pair = p.C_GenerateKeyPair(
        s,
        { mechanism: lib.CKM_EC_KEY_PAIR_GEN },
        [
          { type: lib.CKA_TOKEN, value: true },
          { type: lib.CKA_EC_PARAMS, value: params },
          { type: lib.CKA_LABEL, value: 'legacy' },
          { type: lib.CKA_ID, value: Buffer.from('cc', 'hex') },
          { type: lib.CKA_VERIFY, value: true },
        ],
        [
          { type: lib.CKA_TOKEN, value: true },
          { type: lib.CKA_PRIVATE, value: true },
          { type: lib.CKA_SENSITIVE, value: true },
          { type: lib.CKA_EXTRACTABLE, value: false },
          { type: lib.CKA_SIGN, value: true },
          { type: lib.CKA_LABEL, value: 'legacy' },
          { type: lib.CKA_ID, value: Buffer.from('cc', 'hex') },
        ],
      )
      return pair.publicKey
    })
    expect(legacy).toBeDefined()
    // The attack, without the PIN: every public key object it can see is destroyed and replaced by the attacker's point under the same CKA_ID.
    const swapped = await onToken(null, (p, s) => {
      p.C_FindObjectsInit(s, [{ type: lib.CKA_CLASS, value: lib.CKO_PUBLIC_KEY }])
      const pubs = p.C_FindObjects(s, 10)
      p.C_FindObjectsFinal(s)
      const ids = pubs.map((pub) => p.C_GetAttributeValue(s, pub, [{ type: lib.CKA_ID }])[0]!.value as Buffer)
      for (const pub of pubs) p.C_DestroyObject(s, pub)
      for (const id of ids) p.C_CreateObject(s, publicKeyTemplate(id))
      // A second object under treasury's CKA_ID beside its private public half.
      p.C_CreateObject(s, publicKeyTemplate(Buffer.from('aa', 'hex')))
      return ids.map((id) => id.toString('hex'))
    })
    // treasury's public half is CKA_PRIVATE now: invisible without the PIN, so only the legacy key's was swapped.
    expect(swapped).toEqual(['cc'])

    const backend = await openBackend()
    try {
      expect(backend.keys().map((k) => ({ address: k.address, label: k.label }))).toEqual([{ address: treasury.address, label: 'treasury' }])
      const digest = keccak256(toHex('tx'))
      expect(await recoverAddress({ hash: digest, signature: await backend.keys()[0]!.signDigest(digest) })).toBe(treasury.address)
    } finally {
      await backend.close()
    }
    expect(logged).toContainEqual({
      msg: 'PKCS#11 key object ignored',
      fields: expect.objectContaining({ level: 'warn', label: 'legacy', id: 'cc', reason: expect.stringMatching(/no public key object with its CKA_ID holds the point/) }),
    })
    const listed = await keysCli(['hsm-list'])
    expect(listed.code).toBe(0)
    expect(listed.out).toBe(`${treasury.address}  treasury\n`)
    expect(listed.out).not.toContain(attacker.address)
    expect(listed.err).toMatch(/^countersign-keys: warning: PKCS#11 key object ignored: label "legacy", CKA_ID cc: no public key object/)
  })

  it('(b) a planted private key with CKA_PRIVATE=false is not adopted as a wallet and never signs', async () => {
    await plantPrivateKey('attacker-wallet')
    const backend = await openBackend()
    try {
      expect(backend.keys().map((k) => k.address)).toEqual([treasury.address])
    } finally {
      await backend.close()
    }
    expect(logged).toContainEqual({
      msg: 'PKCS#11 key object ignored',
      fields: expect.objectContaining({ label: 'attacker-wallet', id: 'bb', reason: expect.stringMatching(/^CKA_PRIVATE is not true/) }),
    })
  })

  it('(c) a label with terminal escapes is neither adopted nor printed raw by countersign-keys list', async () => {
    await plantPrivateKey('a-treasury\u001b[2K\r0x0000000000000000000000000000000000000000  treasury')
    const listed = await keysCli(['list'])
    expect(listed).toMatchObject({ code: 0, out: `${treasury.address}  treasury  pkcs11\n` })
    expect(listed.err).toContain('label "a-treasury\\u001b[2K\\u000d0x0000000000000000000000000000000000000000  treasury"')
    expect(listed.out + listed.err).not.toMatch(/[\u001b\r]/)
  })

  it('(d) a planted key labelled like an existing one cannot stop the signer from starting', async () => {
    await plantPrivateKey('treasury')
    const backend = await openBackend()
    try {
      expect(backend.keys().map((k) => ({ address: k.address, label: k.label }))).toEqual([{ address: treasury.address, label: 'treasury' }])
    } finally {
      await backend.close()
    }
    expect((await keysCli(['hsm-generate', '--label', 'cold'])).code).toBe(0)
  })

  it('keys made by hsm-generate have a private, unmodifiable public half: without the PIN it can be neither seen nor destroyed', async () => {
    await onToken(null, (p, s) => {
      p.C_FindObjectsInit(s, [{ type: lib.CKA_CLASS, value: lib.CKO_PUBLIC_KEY }])
      expect(p.C_FindObjects(s, 10)).toEqual([])
      p.C_FindObjectsFinal(s)
    })
    await onToken(token.pin, (p, s) => {
      p.C_FindObjectsInit(s, [{ type: lib.CKA_CLASS, value: lib.CKO_PUBLIC_KEY }, { type: lib.CKA_ID, value: Buffer.from('aa', 'hex') }])
      const [pub] = p.C_FindObjects(s, 10)
      p.C_FindObjectsFinal(s)
      const [priv, modifiable] = p.C_GetAttributeValue(s, pub!, [{ type: lib.CKA_PRIVATE }, { type: lib.CKA_MODIFIABLE }])
      expect([priv!.value, modifiable!.value]).toEqual([Buffer.from([1]), Buffer.from([0])])
    })
  })

  it('a private, signing key whose value can be exported (CKA_EXTRACTABLE, or not CKA_SENSITIVE) is left out, named', async () => {
    for (const [label, sensitive, extractable] of [['exportable', true, true], ['readable', false, false]] as const) {
      await onToken(token.pin, (p, s) =>
        p.C_GenerateKeyPair(
          s,
          { mechanism: lib.CKM_EC_KEY_PAIR_GEN },
          [
            { type: lib.CKA_TOKEN, value: true },
            { type: lib.CKA_PRIVATE, value: true },
            { type: lib.CKA_EC_PARAMS, value: params },
            { type: lib.CKA_ID, value: Buffer.from(label) },
            { type: lib.CKA_VERIFY, value: true },
          ],
          [
            { type: lib.CKA_TOKEN, value: true },
            { type: lib.CKA_PRIVATE, value: true },
            { type: lib.CKA_SENSITIVE, value: sensitive },
            { type: lib.CKA_EXTRACTABLE, value: extractable },
            { type: lib.CKA_SIGN, value: true },
            { type: lib.CKA_LABEL, value: label },
            { type: lib.CKA_ID, value: Buffer.from(label) },
          ],
        ),
      )
    }
    const backend = await openBackend()
    try {
      expect(backend.keys().map((k) => k.label)).toEqual(['treasury'])
    } finally {
      await backend.close()
    }
    expect(logged.map((l) => [l.fields.label, l.fields.reason])).toEqual(
      expect.arrayContaining([
        ['exportable', 'CKA_EXTRACTABLE is not false: its value can be exported from the token'],
        ['readable', 'CKA_SENSITIVE is not true: its value can be read from the token'],
      ]),
    )
  })

  it('one key under two labels (a PIN holder copied it) is refused by name, not used under either', async () => {
    await onToken(token.pin, (p, s) => {
      p.C_FindObjectsInit(s, [{ type: lib.CKA_CLASS, value: lib.CKO_PRIVATE_KEY }, { type: lib.CKA_LABEL, value: 'treasury' }])
      const [original] = p.C_FindObjects(s, 1)
      p.C_FindObjectsFinal(s)
      const copy = p.C_CopyObject(s, original!, [{ type: lib.CKA_LABEL, value: 'treasury-copy' }])
      expect(copy).toBeDefined()
    })
    await expect(openBackend()).rejects.toThrow(/the token keys "treasury" and "treasury-copy" are one key \(0x[0-9a-fA-F]{40}\); remove one/)
  })
})
