import { mkdtempSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import Database from 'better-sqlite3'

/** A fresh WAL-mode database with synchronous=NORMAL, as the services open theirs, and one table to write to. */
export function walDb() {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'cs-wal-')), 'x.db')
  const db = new Database(file)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  db.exec('CREATE TABLE t (v INTEGER)')
  return { file, db, insert: db.prepare('INSERT INTO t (v) VALUES (?)') }
}
