import { randomBytes } from 'node:crypto'
import { pkcs11ConfigFrom, type Pkcs11Config } from '../config.js'
import { readPassphraseFile } from '../keystore/passphrase.js'
import { labelProblem } from '../keystore/format.js'
import { generateTokenKey, initialize, listTokenKeys, loadModule, loadPkcs11Lib, login, moduleRefusalAsOperatorError, slotOfToken, type Handle, type Pkcs11, type Pkcs11Lib, type TokenWarning } from '../pkcs11/token.js'
import { UsageError } from './args.js'
import type { KeyAdded } from './commands.js'

/** A token key as the CLI prints it. */
export interface HsmKeyEntry {
  address: string
  label: string
}

/** The signer's own PKCS#11 settings (SERVICE_PKCS11_*): the CLI works on the token the signer signs with. */
export function hsmConfigOf(env: Record<string, string | undefined>): Pkcs11Config {
  const config = pkcs11ConfigFrom(env)
  if (!config) throw new UsageError('no PKCS#11 token configured: set SERVICE_PKCS11_MODULE, SERVICE_PKCS11_TOKEN_LABEL and SERVICE_PKCS11_PIN_FILE as for the signer')
  return config
}

/** Opens one logged-in session on the configured token, runs `work`, and releases the module. */
async function withTokenSession<T>(env: Record<string, string | undefined>, rw: boolean, work: (lib: Pkcs11Lib, pkcs11: Pkcs11, session: Handle) => Promise<T>): Promise<T> {
  const config = hsmConfigOf(env)
  const pin = readPassphraseFile(config.pinFile, env, 'SERVICE_PKCS11_PIN_FILE')
  const lib = await loadPkcs11Lib()
  const pkcs11 = loadModule(lib, config.modulePath)
  try {
    initialize(lib, pkcs11)
    const slot = slotOfToken(pkcs11, config.tokenLabel)
    const session = pkcs11.C_OpenSession(slot, lib.CKF_SERIAL_SESSION | (rw ? lib.CKF_RW_SESSION : 0))
    login(lib, pkcs11, session, pin)
    return await work(lib, pkcs11, session)
  } catch (err) {
    throw moduleRefusalAsOperatorError(lib, err)
  } finally {
    try {
      pkcs11.C_Finalize()
    } catch {
      // never initialised: nothing to release
    }
    pkcs11.close()
  }
}

/** `hsm-generate --label NAME`: a new non-extractable secp256k1 key on the token; the private key never leaves it. */
export async function hsmGenerate(env: Record<string, string | undefined>, label: string | undefined, warn: TokenWarning = () => {}): Promise<KeyAdded> {
  if (label === undefined) throw new UsageError('hsm-generate needs --label NAME: the signer finds token keys by label')
  const problem = labelProblem(label)
  if (problem) throw new UsageError(problem)
  const config = hsmConfigOf(env)
  const key = await withTokenSession(env, true, (lib, pkcs11, session) => generateTokenKey(lib, pkcs11, session, label, randomBytes(16), warn))
  return { address: key.address, label: key.label, source: 'generated', backend: 'pkcs11', file: `pkcs11:token=${encodeURIComponent(config.tokenLabel)};object=${encodeURIComponent(label)}` }
}

/** `hsm-list`: the token's secp256k1 keys the signer would use, with their addresses; objects it would leave out go to `warn`. */
export async function hsmList(env: Record<string, string | undefined>, warn: TokenWarning = () => {}): Promise<HsmKeyEntry[]> {
  return withTokenSession(env, false, async (lib, pkcs11, session) => (await listTokenKeys(lib, pkcs11, session, warn)).map(({ address, label }) => ({ address, label })))
}

/** A token warning as one line for the CLI's stderr (the label in it is already escaped). */
export const tokenWarningLine = (msg: string, fields: Record<string, unknown>): string =>
  `countersign-keys: warning: ${msg}: label "${String(fields.label)}", CKA_ID ${String(fields.id)}: ${String(fields.reason)}\n`
