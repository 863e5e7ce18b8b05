// The audit log's grouped fsync failing after its commit (a file of its own:
// vi.mock replaces node:fs for the whole file).
import { mkdtempSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it, vi } from 'vitest'

const failing = { next: 0 }
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>()
  return {
    ...fs,
    fdatasync: (fd: number, callback: (err: NodeJS.ErrnoException | null) => void) => {
      if (failing.next > 0) {
        failing.next -= 1
        setImmediate(() => callback(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' })))
      } else fs.fdatasync(fd, callback)
    },
  }
})

const { openAuditLog } = await import('./auditLog.js')
const { AuditWriteError } = await import('./writer.js')

describe('grouped fsync failing after the commit', () => {
  it('rejects with an AuditWriteError marked committed, and the rows are in the log for every reader', async () => {
    const log = openAuditLog(path.join(mkdtempSync(path.join(os.tmpdir(), 'cs-audit-fsync-')), 'audit.db'), { fsync: 'grouped' })
    await log.append({ intentId: 'system', event: 'started', data: {} })
    failing.next = 1
    const err = await log.appendAll([{ intentId: 'i-1', event: 'approval_granted', data: { tokenId: 't-1' } }]).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(AuditWriteError)
    expect(err).toMatchObject({ committed: true, message: expect.stringMatching(/fsync failed .*unknown durability/) })
    expect(log.list({ limit: 10 }).map((e) => e.event)).toEqual(['approval_granted', 'started'])
    await log.close()
  })
})
