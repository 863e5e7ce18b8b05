import type * as Pkcs11Js from 'pkcs11js'
import { addressOfEcPoint, isSecp256k1Params, SECP256K1_EC_PARAMS, uncompressedPoint } from './ecPoint.js'
import { OperatorError } from '@countersign/shared'

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

/** Loads the module's .so into a PKCS11 object (not yet initialised). */
export function loadModule(lib: Pkcs11Lib, modulePath: string): Pkcs11 {
  const pkcs11 = new lib.PKCS11()
  try {
    pkcs11.load(modulePath)
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

function keyOf(label: string, ecPoint: Buffer, handle: Handle): TokenKey {
  return { label, address: addressOfEcPoint(ecPoint), publicPoint: uncompressedPoint(ecPoint), handle }
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

/**
 * The token's labelled secp256k1 private keys, by label order. A private key
 * object carries no public point, so each one's address comes from the
 * CKA_EC_POINT of the public key with the same CKA_ID (the pair generation
 * gives both halves the same id).
 */
export function listTokenKeys(lib: Pkcs11Lib, pkcs11: Pkcs11, session: Handle): TokenKey[] {
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
    const publics = findObjects(pkcs11, session, [
      { type: lib.CKA_CLASS, value: lib.CKO_PUBLIC_KEY },
      { type: lib.CKA_KEY_TYPE, value: lib.CKK_EC },
      { type: lib.CKA_ID, value: id },
    ])
    if (publics.length !== 1) throw new Pkcs11BackendError(`PKCS#11 key "${label}" has ${publics.length} public keys with its CKA_ID, so its address is unknown`)
    keys.push(keyOf(label, attribute(pkcs11, session, publics[0]!, lib.CKA_EC_POINT), handle))
  }
  keys.sort((a, b) => a.label.localeCompare(b.label))
  const labels = keys.map((k) => k.label)
  const twice = labels.find((l, i) => labels.indexOf(l) !== i)
  if (twice !== undefined) throw new Pkcs11BackendError(`two secp256k1 keys on the token are labelled "${twice}"; a key is found by its label, so give each its own`)
  return keys
}

/**
 * Generates a secp256k1 key pair on the token: the private half sensitive and
 * not extractable, so its value never leaves the token, not even wrapped.
 */
export function generateTokenKey(lib: Pkcs11Lib, pkcs11: Pkcs11, session: Handle, label: string, id: Buffer): TokenKey {
  if (listTokenKeys(lib, pkcs11, session).some((k) => k.label === label)) throw new Pkcs11BackendError(`the token already holds a key labelled "${label}"`)
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
  return keyOf(label, attribute(pkcs11, session, pair.publicKey, lib.CKA_EC_POINT), pair.privateKey)
}
