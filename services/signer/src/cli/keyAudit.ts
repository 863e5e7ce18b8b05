import path from 'node:path'
import { openAuditLog } from '@countersign/shared'
import type { KeyAdded } from './commands.js'
import type { KeyEntry } from '../keystore/keystore.js'

/** Appends key_generated / key_imported to DATA_DIR/audit.db: address, label, source, path. Never key material. */
export async function auditKeyAdded(added: KeyAdded, { dataDir }: { dataDir: string }): Promise<void> {
  const audit = openAuditLog(path.join(dataDir, 'audit.db'))
  try {
    await audit.append({
      intentId: 'system',
      event: added.source === 'generated' ? 'key_generated' : 'key_imported',
      data: {
        address: added.address,
        label: added.label,
        source: added.source,
        ...(added.derivationPath ? { path: added.derivationPath } : {}),
        ...(added.backend ? { backend: added.backend } : {}),
      },
    })
  } finally {
    await audit.close()
  }
}

/**
 * Appends keys_resealed: each key `reseal` rewrote as key file format 2, with
 * the dev flag and label now sealed with it. A reseal decides for good whether
 * a key counts as a dev key (a header edited before it is sealed as it
 * stands), so the log keeps what was decided, and when.
 */
export async function auditKeysResealed(resealed: readonly KeyEntry[], { dataDir }: { dataDir: string }): Promise<void> {
  const audit = openAuditLog(path.join(dataDir, 'audit.db'))
  try {
    await audit.append({
      intentId: 'system',
      event: 'keys_resealed',
      data: { keys: resealed.map((k) => ({ address: k.address, label: k.label, dev: k.dev })) },
    })
  } finally {
    await audit.close()
  }
}
