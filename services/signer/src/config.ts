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
}

export function loadSignerConfig(env: Record<string, string | undefined>): SignerConfig {
  const dataDir = path.resolve(env.SERVICE_DATA_DIR?.trim() || 'data')
  return {
    dataDir,
    runDir: path.join(dataDir, 'run'),
    // The zero-config dev stack points this at DATA_DIR/dev-keystore; nothing else does.
    keystoreDir: path.resolve(env.SERVICE_KEYSTORE_DIR?.trim() || path.join(dataDir, 'keystore')),
    policyFile: env.SERVICE_POLICY_FILE?.trim() || null,
    devChainId: devChainIdFrom(env.SERVICE_SIGNER_DEV_CHAIN_ID),
  }
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
