import type { Hex } from 'viem'
import { KeyUnavailableError, type DigestSignature, type KeyBackend, type RingKey } from '../signing/keyBackend.js'
import { ethSignatureOf } from './ecdsa.js'
import { SessionPool } from './sessionPool.js'
import { initialize, listTokenKeys, loadModule, login, slotOfToken, type Handle, type Pkcs11, type Pkcs11Lib, type TokenKey } from './token.js'

export interface Pkcs11BackendOptions {
  modulePath: string
  tokenLabel: string
  pin: string
  /** Sessions open at once; as many signatures proceed in parallel. */
  sessions: number
  log?: (msg: string, fields?: Record<string, unknown>) => void
}

/** One initialisation of the module: its sessions and the key handles they see. */
interface Connection {
  pool: SessionPool<Handle>
  keys: Map<string, TokenKey>
  inFlight: number
  drained: (() => void)[]
}

/** How long after a failed reconnect the next sign tries again; meanwhile signs are refused at once. */
const RECONNECT_BACKOFF_MS = 250

/**
 * Keys on a PKCS#11 token. The ring holds the keys found at start; a
 * signature that fails (token removed, session lost) marks the connection
 * broken and is refused with KeyUnavailableError, and the next signature
 * re-initialises the module, logs in again and finds the keys by label, so
 * the backend recovers when the token returns without a restart.
 */
export async function openPkcs11Backend(lib: Pkcs11Lib, options: Pkcs11BackendOptions): Promise<KeyBackend> {
  const log = options.log ?? (() => {})
  const pkcs11: Pkcs11 = loadModule(lib, options.modulePath)
  let current: Connection | null = null
  let connecting: Promise<Connection> | null = null
  let lastFailure = 0
  let retired: Connection | null = null

  async function connect(): Promise<Connection> {
    initialize(lib, pkcs11)
    const slot = slotOfToken(pkcs11, options.tokenLabel)
    const sessions: Handle[] = []
    for (let i = 0; i < options.sessions; i++) sessions.push(pkcs11.C_OpenSession(slot, lib.CKF_SERIAL_SESSION))
    login(lib, pkcs11, sessions[0]!, options.pin)
    const warn = (msg: string, fields: Record<string, unknown>) => log(msg, { level: 'warn', token: options.tokenLabel, ...fields })
    const keys = new Map((await listTokenKeys(lib, pkcs11, sessions[0]!, warn)).map((k) => [k.address.toLowerCase(), k]))
    return { pool: new SessionPool(sessions), keys, inFlight: 0, drained: [] }
  }

  /** Waits for the broken connection's signatures to return, then finalises the module so the next C_Initialize starts afresh. */
  async function reconnect(): Promise<Connection> {
    const old = retired
    if (old && old.inFlight > 0) await new Promise<void>((resolve) => old.drained.push(resolve))
    try {
      pkcs11.C_Finalize()
    } catch {
      // Already finalised, or the module lost its state with the token: either way C_Initialize follows.
    }
    retired = null
    const conn = await connect()
    log('PKCS#11 token reconnected', { token: options.tokenLabel, keys: conn.keys.size })
    return conn
  }

  async function connection(): Promise<Connection> {
    if (current) return current
    if (!connecting) {
      if (Date.now() - lastFailure < RECONNECT_BACKOFF_MS) throw new KeyUnavailableError(`the PKCS#11 token "${options.tokenLabel}" is not reachable; retrying`)
      connecting = reconnect()
        .then((conn) => (current = conn))
        .catch((err: unknown) => {
          lastFailure = Date.now()
          throw new KeyUnavailableError(`the PKCS#11 token "${options.tokenLabel}" is not reachable: ${(err as Error).message}`)
        })
        .finally(() => (connecting = null))
    }
    return connecting
  }

  function broken(conn: Connection, err: unknown): void {
    if (current !== conn) return
    current = null
    retired = conn
    lastFailure = 0
    log('PKCS#11 signature failed; the token will be reopened', { token: options.tokenLabel, error: (err as Error).message })
  }

  /** The token's raw CKM_ECDSA signature, and the connection that made it. */
  async function signDigest(address: string, digest: Hex): Promise<{ raw: Uint8Array; conn: Connection }> {
    const conn = await connection()
    const key = conn.keys.get(address.toLowerCase())
    if (!key) throw new KeyUnavailableError(`the PKCS#11 token "${options.tokenLabel}" no longer holds the key ${address}`)
    // Counted from before the wait for a session: the module is finalised
    // only once no caller of this connection can still reach into it.
    conn.inFlight++
    let session: Handle | undefined
    try {
      session = await conn.pool.acquire()
      // Another signature found the token gone while this one waited: do not touch the old sessions.
      if (current !== conn) throw new KeyUnavailableError(`the PKCS#11 token "${options.tokenLabel}" is being reopened`)
      pkcs11.C_SignInit(session, { mechanism: lib.CKM_ECDSA }, key.handle)
      return { raw: await pkcs11.C_SignAsync(session, Buffer.from(digest.slice(2), 'hex'), Buffer.alloc(64)), conn }
    } catch (err) {
      if (err instanceof KeyUnavailableError) throw err
      broken(conn, err)
      throw new KeyUnavailableError(`the PKCS#11 token "${options.tokenLabel}" did not sign: ${(err as Error).message}`)
    } finally {
      if (session !== undefined) conn.pool.release(session)
      if (--conn.inFlight === 0) for (const resolve of conn.drained.splice(0)) resolve()
    }
  }

  /** A signature that does not verify also reopens the token, so every key is checked again (listTokenKeys) before the next one. */
  async function verifiedSignature(key: TokenKey, digest: Hex): Promise<DigestSignature> {
    const { raw, conn } = await signDigest(key.address, digest)
    return verifiedTokenSignature(raw, digest, key, options.tokenLabel, (err) => broken(conn, err))
  }

  current = await connect()
  const ring: RingKey[] = [...current.keys.values()].map((k) => ({
    address: k.address,
    label: k.label,
    dev: false,
    backend: 'pkcs11',
    signDigest: (digest: Hex) => verifiedSignature(k, digest),
  }))
  return {
    name: 'pkcs11',
    keys: () => ring,
    async close() {
      current = null
      try {
        pkcs11.C_Finalize()
      } catch {
        // not initialised: nothing to release
      }
      pkcs11.close()
    },
  }
}

/**
 * The token's raw signature as an Ethereum one, verified against the key's
 * point. One that does not verify was not made by the key the address
 * belongs to (the token answered for another object, or wrongly): nothing
 * is signed, and it is a KeyUnavailableError, which the signer refuses as
 * key_unavailable (audited), not a failure of the request.
 */
export async function verifiedTokenSignature(raw: Uint8Array, digest: Hex, key: Pick<TokenKey, 'address' | 'publicPoint'>, tokenLabel: string, onFailure: (err: unknown) => void = () => {}): Promise<DigestSignature> {
  try {
    return await ethSignatureOf(raw, digest, key.publicPoint)
  } catch (err) {
    onFailure(err)
    throw new KeyUnavailableError(`the PKCS#11 token "${tokenLabel}" gave a signature that does not verify against ${key.address} (${(err as Error).message}); nothing was signed`)
  }
}
