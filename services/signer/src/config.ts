import path from 'node:path'

export interface SignerConfig {
  dataDir: string
  /** Directory of the two sockets, mode 0700. */
  runDir: string
  keystoreDir: string
  policyFile: string | null
}

export function loadSignerConfig(env: Record<string, string | undefined>): SignerConfig {
  const dataDir = path.resolve(env.SERVICE_DATA_DIR?.trim() || 'data')
  return {
    dataDir,
    runDir: path.join(dataDir, 'run'),
    // The zero-config dev stack points this at DATA_DIR/dev-keystore; nothing else does.
    keystoreDir: path.resolve(env.SERVICE_KEYSTORE_DIR?.trim() || path.join(dataDir, 'keystore')),
    policyFile: env.SERVICE_POLICY_FILE?.trim() || null,
  }
}
