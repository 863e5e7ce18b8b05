import path from 'node:path'
import type Database from 'better-sqlite3'
import { openAuditLog, type AuditLog, type Clock } from '@countersign/shared'
import { createAuditCheckpoints, type AuditCheckpoints } from '../store/auditCheckpoints.js'
import { SIGNER_FSYNC_LANES } from '../store/signerDb.js'
import { loadOrCreateAuditKey, type AuditKey } from './auditKey.js'
import { createCheckpointer } from './checkpointer.js'

export interface SignerAudit {
  audit: AuditLog
  key: AuditKey
  checkpoints: AuditCheckpoints
}

/** The signer's handle on audit.db: inline writes, checkpoints signed with its audit key and recorded in signer.db. */
export function openSignerAudit(
  dataDir: string,
  signerDb: Database.Database,
  clock: Clock,
  onError: (err: Error) => void = () => {},
  onWalCheckpointError: (err: Error) => void = () => {},
): SignerAudit {
  const key = loadOrCreateAuditKey(dataDir)
  const checkpoints = createAuditCheckpoints(signerDb)
  // Grouped fsync: the signatures that arrive together share one audit fsync
  // and one checkpoint, off the event loop (see AuditLogOptions.fsync), with
  // as many fsyncs at once as signer.db's.
  const audit = openAuditLog(path.join(dataDir, 'audit.db'), { clock, fsync: 'grouped', fsyncLanes: SIGNER_FSYNC_LANES, onWalCheckpointError, checkpoints: createCheckpointer(key, checkpoints, clock, onError) })
  return { audit, key, checkpoints }
}
