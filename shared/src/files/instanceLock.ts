import path from 'node:path'
import Database from 'better-sqlite3'
import { OperatorError } from '../operatorError.js'
import { assertDatabaseFile, makePrivateFile } from './privateFiles.js'

/** The lock a running service holds on its data directory, released when it closes or exits. */
export interface InstanceLock {
  release(): void
}

/**
 * Takes `<dataDir>/<service>.lock` for as long as this process runs, or
 * throws an OperatorError when another process holds it. Found by review: two
 * signers on one data directory both removed the "stale" socket and both
 * listened, the first one unreachable from then on, and the second had read
 * the passphrase, unlocked every key and written audit checkpoints before it
 * noticed anything. The lock is SQLite's own exclusive file lock (an fcntl
 * lock on an empty database kept in exclusive locking mode), which the
 * kernel drops with the process however it ends: no stale lock file to
 * judge, and no pid to trust.
 */
export function holdInstanceLock(dataDir: string, service: string): InstanceLock {
  const file = path.join(dataDir, `${service}.lock`)
  assertDatabaseFile(file)
  makePrivateFile(file)
  const db = new Database(file, { timeout: 0 })
  try {
    db.pragma('locking_mode = EXCLUSIVE')
    db.exec('BEGIN EXCLUSIVE')
  } catch (err) {
    db.close()
    if (String((err as { code?: unknown }).code).startsWith('SQLITE_BUSY')) {
      throw new OperatorError(`another ${service} is running on the data directory ${dataDir} (it holds ${file}); stop it before starting this one: two would serve the same sockets and files`)
    }
    throw err
  }
  return { release: () => db.close() }
}
