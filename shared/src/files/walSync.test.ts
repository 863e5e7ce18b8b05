import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import Database from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import { createWalSync, syncLeftoverWal } from './walSync.js'
import { walDb } from './walSync.testkit.js'

describe('WAL group sync', () => {
  it('one fdatasync covers every commit marked before it started; later commits wait for the next one', async () => {
    const { file, insert } = walDb()
    const sync = createWalSync(file)
    const released: number[] = []
    const first = Array.from({ length: 5 }, (_, i) => {
      insert.run(i)
      sync.committed()
      return sync.durable().then(() => released.push(i))
    })
    await new Promise((r) => setImmediate(r)) // the first sync has started
    insert.run(99)
    sync.committed()
    const late = sync.durable().then(() => released.push(99))
    await Promise.all([...first, late])
    expect(released).toEqual([0, 1, 2, 3, 4, 99])
    expect(sync.stats()).toEqual({ commits: 6, syncs: 2, syncMs: expect.any(Number), waitersPerSync: { 5: 1, 1: 1 } })
    await sync.close()
  })

  it('nothing marked since the last sync: durable() resolves at once; a closed sync refuses', async () => {
    const { file, insert } = walDb()
    const sync = createWalSync(file)
    insert.run(1)
    sync.committed()
    await sync.durable()
    await sync.durable()
    expect(sync.stats().syncs).toBe(1)
    await sync.close()
    await expect(sync.durable()).rejects.toThrow(/closed/)
  })

  it('a failed fdatasync rejects the commits it was to cover (they must not be replied about)', async () => {
    // A database with no -wal file to sync (marked without a write).
    const sync = createWalSync(path.join(mkdtempSync(path.join(os.tmpdir(), 'cs-wal-')), 'none.db'))
    sync.committed()
    await expect(sync.durable()).rejects.toThrow(/may not be on disk: ENOENT/)
  })

  it('syncLeftoverWal: a -wal a killed writer left is synced and then read back; without one, nothing is created', () => {
    const { file, db } = walDb()
    db.close() // a clean close removes the -wal
    expect(existsSync(`${file}-wal`)).toBe(false)
    syncLeftoverWal(file)
    expect(existsSync(`${file}-wal`)).toBe(false)
    // A writer that commits without an fsync (NORMAL) and dies by SIGKILL.
    const killed = spawnSync(process.execPath, ['-e', `
      const db = new (require('better-sqlite3'))(${JSON.stringify(file)})
      db.pragma('synchronous = NORMAL')
      db.prepare('INSERT INTO t (v) VALUES (42)').run()
      process.kill(process.pid, 'SIGKILL')`], { cwd: process.cwd() })
    expect(killed.signal).toBe('SIGKILL')
    expect(existsSync(`${file}-wal`)).toBe(true)
    syncLeftoverWal(file)
    const reopened = new Database(file)
    expect(reopened.prepare('SELECT v FROM t').all()).toEqual([{ v: 42 }])
    reopened.close()
  })
})
