import Database from 'better-sqlite3'
import { assertDatabaseFile, databaseOpenError, makePrivateFile } from './privateFiles.js'

/**
 * A database only its own process opens (signer.db, gateway.db): 0600 with
 * its -wal and -shm whatever the umask, in WAL mode. Something else in the
 * file's place (a directory, a FIFO, other bytes) is an OperatorError naming
 * the file.
 */
export function openPrivateWalDatabase(file: string): Database.Database {
  assertDatabaseFile(file)
  makePrivateFile(file)
  try {
    const db = new Database(file)
    db.pragma('journal_mode = WAL')
    return db
  } catch (err) {
    throw databaseOpenError(file, err)
  }
}
