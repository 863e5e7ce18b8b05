import Database from 'better-sqlite3'
import { openPrivateWalDatabase } from '@countersign/shared'

/**
 * gateway.db: state only the gateway owns (signed transactions it sent, known
 * recipients, skills, swap routes). Rate-limit records are not here: they are
 * rebuilt from the audit log (store/rateLimits.ts); a file of the first
 * layout may still hold a rate_records table, read once and then dropped.
 */
export function openGatewayDb(file: string): Database.Database {
  // 0600 with its -wal/-shm, whatever the umask (it holds signed transactions and skill records).
  const db = openPrivateWalDatabase(file)
  // NORMAL in WAL mode survives a process crash; a power cut may lose the
  // last rows. The audit log, which must survive power loss, stays FULL.
  db.pragma('synchronous = NORMAL')
  db.pragma('busy_timeout = 5000')
  db.exec(`
    CREATE TABLE IF NOT EXISTS known_recipients (
      chain_id   INTEGER NOT NULL,
      wallet     TEXT    NOT NULL,
      address    TEXT    NOT NULL,
      first_seen INTEGER NOT NULL,
      PRIMARY KEY (chain_id, wallet, address)
    );
    CREATE TABLE IF NOT EXISTS sent_txs (
      intent_id        TEXT PRIMARY KEY,
      chain_id         INTEGER NOT NULL,
      wallet           TEXT    NOT NULL,
      tx_request_hash  TEXT    NOT NULL,
      nonce            INTEGER NOT NULL,
      tx_hash          TEXT    NOT NULL,
      signed_tx        TEXT    NOT NULL,
      broadcast_ok     INTEGER NOT NULL,
      updated_at       INTEGER NOT NULL,
      deadline         INTEGER
    );
    -- Our transactions at a nonce: what proves another took it, and what fills a gap the node dropped.
    CREATE INDEX IF NOT EXISTS sent_txs_by_nonce ON sent_txs (chain_id, wallet, nonce);
  `)
  // A file of an earlier layout: the deadline its transactions were signed under was not kept (NULL there).
  const columns = db.prepare<[], { name: string }>('PRAGMA table_info(sent_txs)').all()
  if (!columns.some((c) => c.name === 'deadline')) db.exec('ALTER TABLE sent_txs ADD COLUMN deadline INTEGER')
  return db
}
