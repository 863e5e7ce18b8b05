import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { OperatorError } from '../operatorError.js'
import { openAuditDb } from './writer.js'

describe('openAuditDb on what is not a database', () => {
  it.each([
    ['a directory', (f: string) => mkdirSync(f), /is not a regular file \(a SQLite database is expected there\)/],
    ['a FIFO (refused at once, not waited on)', (f: string) => execFileSync('mkfifo', ['-m', '600', f]), /is not a regular file/],
    ['a file of other bytes', (f: string) => writeFileSync(f, 'x'.repeat(4096)), /is not a SQLite database, or is damaged .*restore it from a backup/],
  ])('%s: an OperatorError naming the file', (_what, make, message) => {
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'cs-notadb-')), 'audit.db')
    make(file)
    let err: unknown
    try {
      openAuditDb(file)
    } catch (e) {
      err = e
    }
    expect(err).toBeInstanceOf(OperatorError)
    expect((err as Error).message).toContain(file)
    expect((err as Error).message).toMatch(message)
  })
})
