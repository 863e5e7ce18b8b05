import { mkdirSync, mkdtempSync, statSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { OperatorError } from '../operatorError.js'
import { openPrivateWalDatabase } from './openDatabase.js'

describe('openPrivateWalDatabase', () => {
  it('creates the file 0600 whatever the umask, in WAL mode', () => {
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'cs-opendb-')), 'x.db')
    const saved = process.umask(0)
    try {
      const db = openPrivateWalDatabase(file)
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal')
      db.close()
    } finally {
      process.umask(saved)
    }
    expect(statSync(file).mode & 0o777).toBe(0o600)
  })

  it.each([
    ['a directory', (f: string) => mkdirSync(f), /is not a regular file/],
    ['other bytes', (f: string) => writeFileSync(f, 'y'.repeat(4096)), /is not a SQLite database, or is damaged/],
  ])('%s in its place is an OperatorError naming the file', (_what, make, message) => {
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'cs-opendb-')), 'signer.db')
    make(file)
    expect(() => openPrivateWalDatabase(file)).toThrow(OperatorError)
    expect(() => openPrivateWalDatabase(file)).toThrow(message)
  })
})
