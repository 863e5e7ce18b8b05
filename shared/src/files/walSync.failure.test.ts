// A failed fdatasync, made to fail on demand (a file of its own: vi.mock
// replaces node:fs for the whole file).
import { describe, expect, it, vi } from 'vitest'

const failing = { next: 0 }
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>()
  const eio = () => Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' })
  return {
    ...fs,
    fdatasync: (fd: number, callback: (err: NodeJS.ErrnoException | null) => void) => {
      if (failing.next > 0) {
        failing.next -= 1
        setImmediate(() => callback(eio()))
      } else fs.fdatasync(fd, callback)
    },
    fdatasyncSync: (fd: number) => {
      if (failing.next > 0) {
        failing.next -= 1
        throw eio()
      }
      fs.fdatasyncSync(fd)
    },
  }
})

const { createWalSync } = await import('./walSync.js')
const { walDb } = await import('./walSync.testkit.js')

describe('WAL group sync after a failed fdatasync', () => {
  it('never again reports anything durable: a retry of the same reply is refused, and so are later commits', async () => {
    // Found by review: Linux reports a failed writeback once and marks the
    // pages clean, so a second fdatasync succeeded and a sign call's retry
    // (finding its stored signature) was told the failed commits were durable.
    const { file, db, insert } = walDb()
    const sync = createWalSync(file)
    insert.run(1)
    sync.committed()
    failing.next = 1
    await expect(sync.durable()).rejects.toThrow(/may not be on disk: EIO.*stop the service, check the disk/)
    await expect(sync.durable()).rejects.toThrow(/may not be on disk/)
    insert.run(2)
    sync.committed()
    await expect(sync.durable()).rejects.toThrow(/may not be on disk/)
    expect(() => sync.durableSync()).toThrow(/may not be on disk/)
    expect(sync.stats().syncs).toBe(1)
    await sync.close()
    db.close()
  })

  it('the same after a failed fdatasync on the calling thread (durableSync)', async () => {
    const { file, db, insert } = walDb()
    const sync = createWalSync(file)
    insert.run(1)
    sync.committed()
    failing.next = 1
    expect(() => sync.durableSync()).toThrow(/may not be on disk: EIO/)
    await expect(sync.durable()).rejects.toThrow(/may not be on disk/)
    await sync.close()
    db.close()
  })
})
