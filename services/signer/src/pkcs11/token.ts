import { randomBytes } from 'node:crypto'
import type * as Pkcs11Js from 'pkcs11js'
import { OperatorError, trustedCodeFile } from '@countersign/shared'
import { labelProblem, printableLabel } from '../keystore/format.js'
import { ethSignatureOf } from './ecdsa.js'
import { addressOfEcPoint, isSecp256k1Params, SECP256K1_EC_PARAMS, uncompressedPoint } from './ecPoint.js'

export type Pkcs11Lib = typeof Pkcs11Js
export type Pkcs11 = Pkcs11Js.PKCS11
export type Handle = Buffer

/** A configuration or token problem the operator must fix; the message is safe to print (never the PIN). */
export class Pkcs11BackendError extends OperatorError {
  override name = 'Pkcs11BackendError'
}

/**
 * pkcs11js, loaded only when a PKCS#11 module is configured: it is an
 * optional dependency, and a signer without an HSM never loads native code
 * for one.
 */
export async function loadPkcs11Lib(): Promise<Pkcs11Lib> {
  try {
    const mod = (await import('pkcs11js')) as Pkcs11Lib & { default?: Pkcs11Lib }
    return mod.default ?? mod
  } catch (err) {
    throw new Pkcs11BackendError(`SERVICE_PKCS11_MODULE is set but the optional package pkcs11js cannot be loaded (${(err as Error).message}); run npm install in the signer's directory`)
  }
}

/**
 * A refusal of the PKCS#11 module itself (wrong PIN, token removed, a CKR_*
 * code) as an operator error, so entry points print its message without a
 * stack; anything else is returned unchanged.
 */
export function moduleRefusalAsOperatorError(lib: Pkcs11Lib, err: unknown): unknown {
  return err instanceof lib.Pkcs11Error ? new Pkcs11BackendError(`the PKCS#11 module refused: ${err.message}`) : err
}

/**
 * Loads the module's .so into a PKCS11 object (not yet initialised). The
 * module runs inside this process, beside the PIN and every keystore key, so
 * it is loaded only from a file that no one but root and this user can
 * replace (trustedCodeFile), and from its real path, the one checked.
 */
export function loadModule(lib: Pkcs11Lib, modulePath: string): Pkcs11 {
  const real = trustedCodeFile(modulePath, 'SERVICE_PKCS11_MODULE', (message) => new Pkcs11BackendError(message))
  const pkcs11 = new lib.PKCS11()
  try {
    pkcs11.load(real)
  } catch (err) {
    throw new Pkcs11BackendError(`cannot load the PKCS#11 module ${modulePath}: ${(err as Error).message}`)
  }
  return pkcs11
}

/** C_Initialize for a multi-threaded caller (signatures run on libuv's thread pool). */
export function initialize(lib: Pkcs11Lib, pkcs11: Pkcs11): void {
  try {
    pkcs11.C_Initialize({ flags: lib.CKF_OS_LOCKING_OK })
  } catch (err) {
    if (!/CKR_CRYPTOKI_ALREADY_INITIALIZED/.test((err as Error).message)) throw err
  }
}

/** The slot holding the token labelled `label`; a PKCS#11 token label is padded with blanks to 32 characters. */
export function slotOfToken(pkcs11: Pkcs11, label: string): Handle {
  const slots = pkcs11.C_GetSlotList(true)
  const found = slots.filter((slot) => pkcs11.C_GetTokenInfo(slot).label.trimEnd() === label)
  if (found.length === 0) throw new Pkcs11BackendError(`no PKCS#11 token labelled "${label}" is present (SERVICE_PKCS11_TOKEN_LABEL)`)
  if (found.length > 1) throw new Pkcs11BackendError(`${found.length} PKCS#11 tokens are labelled "${label}"; give each token its own label`)
  return found[0]!
}

/** Logs the application in as the token's user; one login covers every session of the application on that token. */
export function login(lib: Pkcs11Lib, pkcs11: Pkcs11, session: Handle, pin: string): void {
  try {
    pkcs11.C_Login(session, lib.CKU_USER, pin)
  } catch (err) {
    const message = (err as Error).message
    if (/CKR_USER_ALREADY_LOGGED_IN/.test(message)) return
    if (/CKR_PIN_INCORRECT|CKR_PIN_INVALID|CKR_PIN_LEN_RANGE/.test(message)) throw new Pkcs11BackendError('the PKCS#11 token refused the user PIN (SERVICE_PKCS11_PIN_FILE)')
    if (/CKR_PIN_LOCKED/.test(message)) throw new Pkcs11BackendError('the PKCS#11 token has locked the user PIN after too many wrong attempts')
    throw err
  }
}

/** A secp256k1 private key on the token, with the address of its public half. */
export interface TokenKey {
  label: string
  address: string
  /** The public key, uncompressed (04 x y). */
  publicPoint: Uint8Array
  handle: Handle
}

function findObjects(pkcs11: Pkcs11, session: Handle, template: Pkcs11Js.Template): Handle[] {
  pkcs11.C_FindObjectsInit(session, template)
  try {
    const out: Handle[] = []
    for (;;) {
      const batch = pkcs11.C_FindObjects(session, 64)
      if (batch.length === 0) return out
      out.push(...batch)
    }
  } finally {
    pkcs11.C_FindObjectsFinal(session)
  }
}

const attribute = (pkcs11: Pkcs11, session: Handle, object: Handle, type: number): Buffer => {
  const [attr] = pkcs11.C_GetAttributeValue(session, object, [{ type }])
  return attr?.value as Buffer
}

/** A CK_BBOOL attribute; null when the token does not report it (an attribute the object lacks counts as neither). */
function flag(pkcs11: Pkcs11, session: Handle, object: Handle, type: number): boolean | null {
  try {
    const value = attribute(pkcs11, session, object, type)
    return value?.length === 1 ? value[0] !== 0 : null
  } catch {
    return null
  }
}

/** Reports a token object the signer does not use, and why; the label escaped, since anyone who can open the token chose it. */
export type TokenWarning = (msg: string, fields: Record<string, unknown>) => void

/**
 * Why this private key object is not one the signer may use, or null. Anyone
 * who can open the token without the PIN (the softhsm group, a USB token
 * allowing R/W public sessions) can create and destroy objects with
 * CKA_PRIVATE=false, including a private key whose value they chose. A token
 * refuses to create or show a CKA_PRIVATE=true object outside a logged-in
 * session, so that flag is what says the PIN holder made it; sensitive and
 * not extractable say its value cannot be read out (through the PIN either).
 * CKA_LOCAL and CKA_NEVER_EXTRACTABLE are not required: a key moved between
 * HSMs by the vendor's wrapped backup, which operations.md recommends, has
 * both false, and neither keeps out the attacker here (only the PIN holder
 * can set CKA_PRIVATE=true).
 */
function privateKeyProblem(lib: Pkcs11Lib, pkcs11: Pkcs11, session: Handle, handle: Handle, label: string): string | null {
  if (flag(pkcs11, session, handle, lib.CKA_PRIVATE) !== true) return 'CKA_PRIVATE is not true: anyone who can open the token without the PIN can make such an object'
  if (flag(pkcs11, session, handle, lib.CKA_SENSITIVE) !== true) return 'CKA_SENSITIVE is not true: its value can be read from the token'
  if (flag(pkcs11, session, handle, lib.CKA_EXTRACTABLE) !== false) return 'CKA_EXTRACTABLE is not false: its value can be exported from the token'
  if (flag(pkcs11, session, handle, lib.CKA_SIGN) !== true) return 'CKA_SIGN is not true'
  return labelProblem(label)
}

/**
 * The uncompressed public point of the private key `handle`, or null: the
 * CKA_EC_POINT of a public key object with its CKA_ID that a signature by the
 * private key, over a fresh random digest, verifies against. Public key
 * objects are not to be trusted (without the PIN they can be replaced under
 * the same CKA_ID, which would announce an attacker's address for the key),
 * so the point is taken only when the private key itself proves it; a point
 * off the curve never verifies.
 */
async function provenPoint(lib: Pkcs11Lib, pkcs11: Pkcs11, session: Handle, handle: Handle, id: Buffer | undefined): Promise<Uint8Array | null> {
  if (!id) return null
  const digest = randomBytes(32)
  pkcs11.C_SignInit(session, { mechanism: lib.CKM_ECDSA }, handle)
  const raw = pkcs11.C_Sign(session, digest, Buffer.alloc(64))
  const publics = findObjects(pkcs11, session, [
    { type: lib.CKA_CLASS, value: lib.CKO_PUBLIC_KEY },
    { type: lib.CKA_KEY_TYPE, value: lib.CKK_EC },
    { type: lib.CKA_ID, value: id },
  ])
  for (const object of publics) {
    let point: Uint8Array
    try {
      point = uncompressedPoint(attribute(pkcs11, session, object, lib.CKA_EC_POINT))
      await ethSignatureOf(raw, `0x${digest.toString('hex')}`, point)
    } catch {
      continue // not a point, or not this key's: someone else's object under its CKA_ID
    }
    return point
  }
  return null
}

/**
 * The token's labelled secp256k1 private keys that the signer may use, by
 * label order. Each must be a private, sensitive, non-extractable signing
 * key with a printable label, and must sign a random digest that verifies
 * against the public point its address is made from (provenPoint); any
 * other secp256k1 private key object is left out and reported through
 * `warn`, naming it, before labels are compared, so an object planted
 * without the PIN can neither become a wallet nor, by taking a key's label,
 * stop the signer. Needs a logged-in session (the test signature).
 */
export async function listTokenKeys(lib: Pkcs11Lib, pkcs11: Pkcs11, session: Handle, warn: TokenWarning = () => {}): Promise<TokenKey[]> {
  const keys: TokenKey[] = []
  const privates = findObjects(pkcs11, session, [
    { type: lib.CKA_CLASS, value: lib.CKO_PRIVATE_KEY },
    { type: lib.CKA_KEY_TYPE, value: lib.CKK_EC },
  ])
  for (const handle of privates) {
    const params = attribute(pkcs11, session, handle, lib.CKA_EC_PARAMS)
    if (!params || !isSecp256k1Params(params)) continue
    const label = attribute(pkcs11, session, handle, lib.CKA_LABEL)?.toString('utf8') ?? ''
    if (label === '') continue
    const id = attribute(pkcs11, session, handle, lib.CKA_ID)
    const ignored = (reason: string) =>
      warn('PKCS#11 key object ignored', { label: printableLabel(label), id: id?.toString('hex') ?? null, reason })
    const problem = privateKeyProblem(lib, pkcs11, session, handle, label)
    if (problem) {
      ignored(problem)
      continue
    }
    let point: Uint8Array | null
    try {
      point = await provenPoint(lib, pkcs11, session, handle, id)
    } catch (err) {
      if (!(err instanceof lib.Pkcs11Error)) throw err
      ignored(`the token refused a test signature with it (${err.message})`)
      continue
    }
    if (!point) {
      ignored('no public key object with its CKA_ID holds the point its signatures verify against, so its address is unknown')
      continue
    }
    keys.push({ label, address: addressOfEcPoint(point), publicPoint: point, handle })
  }
  keys.sort((a, b) => a.label.localeCompare(b.label))
  const labels = keys.map((k) => k.label)
  const twice = labels.find((l, i) => labels.indexOf(l) !== i)
  if (twice !== undefined) throw new Pkcs11BackendError(`two secp256k1 keys on the token are labelled "${twice}"; a key is found by its label, so give each its own`)
  const addresses = keys.map((k) => k.address)
  const same = addresses.findIndex((a, i) => addresses.indexOf(a) !== i)
  if (same !== -1) {
    const first = keys[addresses.indexOf(addresses[same]!)]!
    throw new Pkcs11BackendError(`the token keys "${first.label}" and "${keys[same]!.label}" are one key (${addresses[same]}); remove one, so each address has one label`)
  }
  return keys
}

/**
 * Generates a secp256k1 key pair on the token: the private half sensitive and
 * not extractable, so its value never leaves the token, not even wrapped.
 */
export async function generateTokenKey(lib: Pkcs11Lib, pkcs11: Pkcs11, session: Handle, label: string, id: Buffer, warn: TokenWarning = () => {}): Promise<TokenKey> {
  if ((await listTokenKeys(lib, pkcs11, session, warn)).some((k) => k.label === label)) throw new Pkcs11BackendError(`the token already holds a key labelled "${label}"`)
  const params = Buffer.from(SECP256K1_EC_PARAMS)
  const pair = pkcs11.C_GenerateKeyPair(
    session,
    { mechanism: lib.CKM_EC_KEY_PAIR_GEN },
    [
      { type: lib.CKA_TOKEN, value: true },
      { type: lib.CKA_EC_PARAMS, value: params },
      { type: lib.CKA_LABEL, value: label },
      { type: lib.CKA_ID, value: id },
      { type: lib.CKA_VERIFY, value: true },
      // Private: without the PIN the public half can then be neither seen
      // nor destroyed (CKA_PRIVATE=false objects can, and an address-less key
      // is one the signer must leave out). Not modifiable: its point is fixed.
      { type: lib.CKA_PRIVATE, value: true },
      { type: lib.CKA_MODIFIABLE, value: false },
    ],
    [
      { type: lib.CKA_TOKEN, value: true },
      { type: lib.CKA_PRIVATE, value: true },
      { type: lib.CKA_SENSITIVE, value: true },
      { type: lib.CKA_EXTRACTABLE, value: false },
      { type: lib.CKA_SIGN, value: true },
      { type: lib.CKA_LABEL, value: label },
      { type: lib.CKA_ID, value: id },
    ],
  )
  const point = uncompressedPoint(attribute(pkcs11, session, pair.publicKey, lib.CKA_EC_POINT))
  return { label, address: addressOfEcPoint(point), publicPoint: point, handle: pair.privateKey }
}
