import Database from 'better-sqlite3'
import { createWalSync, openPrivateWalDatabase, SIGNER_CHECKPOINT_TABLE, type WalSync } from '@countersign/shared'

export interface SignerDb {
  db: Database.Database
  /** The fsync of signer.db's commits, on libuv's pool; see createWalSync. */
  wal: WalSync
}

/**
 * How many fdatasyncs of signer.db, and of the signer's audit.db, may run at
 * once (WalSyncOptions.lanes). Two: under concurrent callers the commits made
 * while one fsync runs start their own beside it instead of waiting for it to
 * end first (bench/RESULTS.md, 2026-12-07).
 */
export const SIGNER_FSYNC_LANES = 2

/**
 * signer.db: approval tokens, signatures by intent id, and the signer's own
 * per-wallet signature records for its rate-limit re-check, its latest audit
 * checkpoint. Only the signer
 * opens this file; it is created 0600 before SQLite touches it.
 *
 * synchronous=NORMAL with the returned WalSync: a commit does not fsync on the
 * event loop; whoever replies about it awaits wal.durable() first, which
 * fsyncs every commit made so far at once (group commit).
 */
export function openSignerDb(file: string): SignerDb {
  // 0600 whatever the umask; SQLite gives -wal and -shm the same mode.
  const db = openPrivateWalDatabase(file)
  db.pragma('synchronous = NORMAL')
  db.pragma('busy_timeout = 5000')
  db.exec(`
    CREATE TABLE IF NOT EXISTS approval_tokens (
      id               TEXT PRIMARY KEY,
      tx_request_hash  TEXT    NOT NULL,
      -- keccak256(JCS(intent)) of the approved intent; NULL only in rows from before intent binding
      intent_hash      TEXT,
      intent_id        TEXT    NOT NULL,
      issued_at        INTEGER NOT NULL,
      expires_at       INTEGER NOT NULL,
      consumed_at      INTEGER,
      -- the txHash of the lost transaction the operator approved replacing; NULL: a first signature
      replaces_tx_hash TEXT
    );
    CREATE INDEX IF NOT EXISTS approval_tokens_expiry ON approval_tokens (expires_at);
    CREATE TABLE IF NOT EXISTS signatures (
      intent_id        TEXT PRIMARY KEY,
      tx_request_hash  TEXT    NOT NULL,
      signer_address   TEXT    NOT NULL,
      chain_id         INTEGER NOT NULL,
      nonce            INTEGER NOT NULL,
      signed_tx        TEXT    NOT NULL,
      tx_hash          TEXT    NOT NULL,
      token_id         TEXT,
      created_at       INTEGER NOT NULL,
      -- 1 once signature_created is in the audit log (a crash can fall between the two commits)
      audited          INTEGER NOT NULL DEFAULT 0,
      -- the tx_hash of the signature this one replaced (see replaced_signatures)
      replaces_tx_hash TEXT
    );
    CREATE INDEX IF NOT EXISTS signatures_by_wallet ON signatures (signer_address, created_at);
    -- Signatures an intent no longer uses: their nonce went to another
    -- transaction before they were mined, and the intent was signed again.
    CREATE TABLE IF NOT EXISTS replaced_signatures (
      tx_hash          TEXT PRIMARY KEY,
      intent_id        TEXT    NOT NULL,
      signer_address   TEXT    NOT NULL,
      chain_id         INTEGER NOT NULL,
      nonce            INTEGER NOT NULL,
      signed_tx        TEXT    NOT NULL,
      token_id         TEXT,
      created_at       INTEGER NOT NULL,
      replaced_at      INTEGER NOT NULL,
      replaced_by      TEXT    NOT NULL
    );
    CREATE INDEX IF NOT EXISTS replaced_signatures_by_wallet ON replaced_signatures (signer_address, replaced_at);
    -- The signer's latest audit checkpoint (one row): countersign-audit verify
    -- requires the log to reach it, so a log cut short is caught.
    CREATE TABLE IF NOT EXISTS ${SIGNER_CHECKPOINT_TABLE} (
      id          INTEGER PRIMARY KEY CHECK (id = 1),
      seq         INTEGER NOT NULL,
      hash        TEXT    NOT NULL,
      head_seq    INTEGER NOT NULL,
      head_hash   TEXT    NOT NULL,
      written_at  INTEGER NOT NULL
    );
    -- Every checkpoint recorded, by the row it sealed: a re-anchor takes a
    -- log only if the newest of these rows it still holds is unchanged
    -- (cli/auditReanchor.ts). One row a checkpoint.
    CREATE TABLE IF NOT EXISTS audit_checkpoint_history (
      head_seq    INTEGER PRIMARY KEY,
      head_hash   TEXT    NOT NULL,
      seq         INTEGER NOT NULL,
      hash        TEXT    NOT NULL,
      written_at  INTEGER NOT NULL
    );
  `)
  // A signer.db from before intent binding: add the column; its old tokens match no intent and expire within 300 s.
  const columns = db.prepare<[], { name: string }>('PRAGMA table_info(approval_tokens)').all()
  if (!columns.some((c) => c.name === 'intent_hash')) db.exec('ALTER TABLE approval_tokens ADD COLUMN intent_hash TEXT')
  // A signer.db from before tokens named what they replace: its tokens (at most 300 s old) replace nothing.
  if (!columns.some((c) => c.name === 'replaces_tx_hash')) db.exec('ALTER TABLE approval_tokens ADD COLUMN replaces_tx_hash TEXT')
  // A signer.db from before replacements: the column that links a replacement to what it replaced.
  const sigColumns = db.prepare<[], { name: string }>('PRAGMA table_info(signatures)').all()
  if (!sigColumns.some((c) => c.name === 'replaces_tx_hash')) db.exec('ALTER TABLE signatures ADD COLUMN replaces_tx_hash TEXT')
  return { db, wal: createWalSync(file, { lanes: SIGNER_FSYNC_LANES }) }
}
