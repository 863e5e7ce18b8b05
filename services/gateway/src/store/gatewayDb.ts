import Database from 'better-sqlite3'

/** gateway.db: state only the gateway owns (rate-limit records, signed transactions it sent). */
export function openGatewayDb(file: string): Database.Database {
  const db = new Database(file)
  db.pragma('journal_mode = WAL')
  // NORMAL in WAL mode survives a process crash; a power cut may lose the
  // last records, which only makes the rate limit briefly more lenient. The
  // audit log, which must survive power loss, stays FULL.
  db.pragma('synchronous = NORMAL')
  db.pragma('busy_timeout = 5000')
  db.exec(`
    -- Rate-limit records (store/rateLimits.ts). An append log ordered by
    -- time: one intent counts once because the gateway, the only writer,
    -- keeps the window's records in memory and never appends an intent id
    -- twice. Keyed this way an insert appends to the table and to a time
    -- index (about 5 us); keyed by (wallet, intent_id) with a (wallet, time)
    -- index it cost about 34 us on the event loop of every build.
    CREATE TABLE IF NOT EXISTS rate_limit_records (
      wallet    TEXT    NOT NULL,
      intent_id TEXT    NOT NULL,
      at_ms     INTEGER NOT NULL
    );
    CREATE INDEX IF NOT EXISTS rate_limit_records_by_time ON rate_limit_records (at_ms);
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
      updated_at       INTEGER NOT NULL
    );
  `)
  migrateRateRecords(db)
  return db
}

/** Moves the records of the first layout (table rate_records) into rate_limit_records, once. */
function migrateRateRecords(db: Database.Database): void {
  const old = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'rate_records'").get()
  if (!old) return
  db.transaction(() => {
    db.exec(`
      INSERT INTO rate_limit_records (wallet, intent_id, at_ms)
        SELECT lower(wallet), intent_id, at_ms FROM rate_records ORDER BY at_ms;
      DROP TABLE rate_records;
    `)
  }).immediate()
}
