import { rmSync, statSync } from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { openCheckpointConnection, startWalCheckpoints, type WalCheckpoints } from './walCheckpoints.js'
import { walDb } from './walSync.testkit.js'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
async function until(what: string, check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await sleep(10)
  }
}

let running: WalCheckpoints | undefined
const opened: Array<ReturnType<typeof walDb>> = []
afterEach(async () => {
  await running?.close()
  running = undefined
  for (const w of opened.splice(0)) {
    if (w.db.open) w.db.close()
    rmSync(path.dirname(w.file), { recursive: true, force: true })
  }
})

/** ~4 KiB rows, one commit each: three -wal pages a commit (the row's page, its overflow, the table's). */
function writer() {
  const w = walDb()
  opened.push(w)
  w.db.exec('CREATE TABLE big (b BLOB)')
  const put = w.db.prepare('INSERT INTO big (b) VALUES (randomblob(4000))')
  // NOOP: reads the -wal's state and copies nothing, so what it shows copied was copied by someone else.
  const noop = w.db.prepare<[], { log: number; checkpointed: number }>('PRAGMA wal_checkpoint(NOOP)')
  return {
    ...w,
    commits: (n: number) => {
      for (let i = 0; i < n; i++) put.run()
    },
    walState: () => noop.get()!,
  }
}

describe('startWalCheckpoints: SQLite WAL checkpoints on a thread of their own', () => {
  it('the thread copies the -wal frames into the main file, the writer\'s own checkpoint waits for the backstop, and the -wal file then restarts', async () => {
    const w = writer()
    running = startWalCheckpoints(w.db, w.file, { everyMs: 20 })
    expect(w.db.pragma('wal_autocheckpoint', { simple: true })).toBe(10_000)
    // 1,200 commits, about 3,600 pages: past SQLite's default of 1,000 pages, where the writer would have checkpointed in a commit.
    for (let burst = 0; burst < 24; burst++) {
      w.commits(50)
      await sleep(5)
    }
    await until('the thread to copy every frame', () => {
      const { log, checkpointed } = w.walState()
      return log === checkpointed
    })
    expect(running.stats().copied).toBeGreaterThan(0)
    // Every frame copied (and the main file fsynced): the next commit starts the -wal file again from its beginning.
    const walBytes = statSync(`${w.file}-wal`).size
    w.commits(1)
    expect(w.walState().log).toBeLessThan(10)
    expect(statSync(`${w.file}-wal`).size).toBe(walBytes)
    expect(w.db.prepare('SELECT count(*) AS n FROM big').get()).toEqual({ n: 1201 })
    expect(running.stats().failed).toBe(0)
  })

  it('the thread\'s connection syncs in its checkpoints (synchronous FULL; only OFF would not): frames count as copied once the main file is on disk', () => {
    const w = writer()
    const conn = openCheckpointConnection(w.file)
    try {
      expect(conn.pragma('synchronous', { simple: true })).toBe(2)
    } finally {
      conn.close()
    }
  })

  it('close() ends the thread and gives the writer back SQLite\'s own checkpoint; a file it cannot open is reported, and the writer goes on', async () => {
    const w = writer()
    const errors: Error[] = []
    running = startWalCheckpoints(w.db, `${w.file}.missing`, { everyMs: 10, onError: (e) => errors.push(e) })
    await until('the failure to be reported', () => errors.length > 0)
    expect(errors[0]?.message).toMatch(/unable to open database file/)
    w.commits(10)
    await running.close()
    expect(w.db.pragma('wal_autocheckpoint', { simple: true })).toBe(1000)
    running = startWalCheckpoints(w.db, w.file, { everyMs: 10 })
    await until('a run', () => running!.stats().runs > 0)
    const before = running.stats().runs
    await running.close()
    await sleep(50)
    expect(running.stats().runs).toBe(before)
  })

  it('refuses an interval or a backstop that is not a positive whole number', () => {
    const w = writer()
    expect(() => startWalCheckpoints(w.db, w.file, { everyMs: 0 })).toThrow(RangeError)
    expect(() => startWalCheckpoints(w.db, w.file, { backstopPages: 1.5 })).toThrow(RangeError)
  })
})
