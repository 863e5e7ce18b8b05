import path from 'node:path'
import { ConfigError, readDataDir, readVariable, type ChainId, type Env } from '@countersign/shared'

/** A signer setting refused at start (a ConfigError, so every entry point prints its message alone). */
export class SignerConfigError extends ConfigError {
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

/** The signer's settings, composed from the shared SERVICE_* readers; any bad value is a ConfigError naming its variable. */
export function loadSignerConfig(env: Env): SignerConfig {
  const dataDir = readDataDir(env)
  return {
    dataDir,
    runDir: path.join(dataDir, 'run'),
    // The zero-config dev stack points this at DATA_DIR/dev-keystore; nothing else does.
    keystoreDir: readVariable(env, 'SERVICE_KEYSTORE_DIR') ?? path.join(dataDir, 'keystore'),
    policyFile: readVariable(env, 'SERVICE_POLICY_FILE') ?? null,
    devChainId: readVariable(env, 'SERVICE_SIGNER_DEV_CHAIN_ID') ?? null,
    pkcs11: pkcs11ConfigFrom(env),
  }
}

/** The PKCS#11 settings: all of module, token label and PIN file, or none (SERVICE_PKCS11_SESSIONS alone is ignored). */
export function pkcs11ConfigFrom(env: Env): Pkcs11Config | null {
  const modulePath = readVariable(env, 'SERVICE_PKCS11_MODULE')
  const tokenLabel = readVariable(env, 'SERVICE_PKCS11_TOKEN_LABEL')
  const pinFile = readVariable(env, 'SERVICE_PKCS11_PIN_FILE')
  if (!modulePath) {
    if (tokenLabel || pinFile) throw new SignerConfigError('SERVICE_PKCS11_TOKEN_LABEL and SERVICE_PKCS11_PIN_FILE need SERVICE_PKCS11_MODULE, the path of the PKCS#11 module')
    return null
  }
  if (!tokenLabel) throw new SignerConfigError('SERVICE_PKCS11_MODULE is set: set SERVICE_PKCS11_TOKEN_LABEL to the label of the token holding the keys')
  if (!pinFile) throw new SignerConfigError('SERVICE_PKCS11_MODULE is set: set SERVICE_PKCS11_PIN_FILE to a file (mode 0600) holding the token user PIN')
  return { modulePath, tokenLabel, pinFile, sessions: readVariable(env, 'SERVICE_PKCS11_SESSIONS') ?? DEFAULT_PKCS11_SESSIONS }
}
