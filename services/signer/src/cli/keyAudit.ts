import path from 'node:path'
import { openAuditLog } from '@countersign/shared'
import type { KeyAdded } from './commands.js'

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
