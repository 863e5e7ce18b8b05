import path from 'node:path'
import { SUPPORTED_CHAIN_IDS, type ChainId } from '@countersign/shared'

export class SignerConfigError extends Error {
  override name = 'SignerConfigError'
}

export interface SignerConfig {
  dataDir: string
  /** Directory of the two sockets, mode 0700. */
  runDir: string
  keystoreDir: string
  policyFile: string | null
  /**
   * The chain a dev key may sign for (SERVICE_SIGNER_DEV_CHAIN_ID, set only by
   * the dev launcher for its local anvil); null: dev keys never sign. The
   * signer decides this from its own configuration: nothing a caller sends
   * can widen it.
   */
  devChainId: ChainId | null
  /** The PKCS#11 key backend, when SERVICE_PKCS11_MODULE is set; null: keystore keys only. */
  pkcs11: Pkcs11Config | null
}

export interface Pkcs11Config {
  /** Path of the module's shared library (SERVICE_PKCS11_MODULE). */
  modulePath: string
  /** The token's label (SERVICE_PKCS11_TOKEN_LABEL). */
  tokenLabel: string
  /** The file holding the user PIN (SERVICE_PKCS11_PIN_FILE), mode 0600 like the passphrase file. */
  pinFile: string
  /** Sessions open at once (SERVICE_PKCS11_SESSIONS, default 4). */
  sessions: number
}

export const DEFAULT_PKCS11_SESSIONS = 4
const MAX_PKCS11_SESSIONS = 64

export function loadSignerConfig(env: Record<string, string | undefined>): SignerConfig {
  const dataDir = path.resolve(env.SERVICE_DATA_DIR?.trim() || 'data')
  return {
    dataDir,
    runDir: path.join(dataDir, 'run'),
    // The zero-config dev stack points this at DATA_DIR/dev-keystore; nothing else does.
    keystoreDir: path.resolve(env.SERVICE_KEYSTORE_DIR?.trim() || path.join(dataDir, 'keystore')),
    policyFile: env.SERVICE_POLICY_FILE?.trim() || null,
    devChainId: devChainIdFrom(env.SERVICE_SIGNER_DEV_CHAIN_ID),
    pkcs11: pkcs11ConfigFrom(env),
  }
}

/** The PKCS#11 settings: all of module, token label and PIN file, or none (SERVICE_PKCS11_SESSIONS alone is ignored). */
export function pkcs11ConfigFrom(env: Record<string, string | undefined>): Pkcs11Config | null {
  const modulePath = env.SERVICE_PKCS11_MODULE?.trim()
  const tokenLabel = env.SERVICE_PKCS11_TOKEN_LABEL?.trim()
  const pinFile = env.SERVICE_PKCS11_PIN_FILE?.trim()
  if (!modulePath) {
    if (tokenLabel || pinFile) throw new SignerConfigError('SERVICE_PKCS11_TOKEN_LABEL and SERVICE_PKCS11_PIN_FILE need SERVICE_PKCS11_MODULE, the path of the PKCS#11 module')
    return null
  }
  if (!path.isAbsolute(modulePath)) throw new SignerConfigError(`SERVICE_PKCS11_MODULE must be an absolute path; got "${modulePath}"`)
  if (!tokenLabel) throw new SignerConfigError('SERVICE_PKCS11_MODULE is set: set SERVICE_PKCS11_TOKEN_LABEL to the label of the token holding the keys')
  if (!pinFile) throw new SignerConfigError('SERVICE_PKCS11_MODULE is set: set SERVICE_PKCS11_PIN_FILE to a file (mode 0600) holding the token user PIN')
  const text = env.SERVICE_PKCS11_SESSIONS?.trim()
  const sessions = text ? Number(text) : DEFAULT_PKCS11_SESSIONS
  if (text && (!/^[0-9]+$/.test(text) || sessions < 1 || sessions > MAX_PKCS11_SESSIONS)) {
    throw new SignerConfigError(`SERVICE_PKCS11_SESSIONS must be a whole number from 1 to ${MAX_PKCS11_SESSIONS}; got "${text}"`)
  }
  return { modulePath, tokenLabel, pinFile: path.resolve(pinFile), sessions }
}

function devChainIdFrom(value: string | undefined): ChainId | null {
  const text = value?.trim()
  if (!text) return null
  const id = Number(text)
  if (!/^[0-9]+$/.test(text) || !(SUPPORTED_CHAIN_IDS as readonly number[]).includes(id)) {
    throw new SignerConfigError(`SERVICE_SIGNER_DEV_CHAIN_ID must be one of ${SUPPORTED_CHAIN_IDS.join(', ')}; got "${text}"`)
  }
  return id as ChainId
}
