import { statSync } from 'node:fs'
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

/** Frames in the -wal file, and how many are copied (a PASSIVE checkpoint of its own, which copies what the thread left). */
function walState(file: string): { log: number; checkpointed: number } {
  const conn = openCheckpointConnection(file)
  try {
    return (conn.pragma('wal_checkpoint(PASSIVE)') as Array<{ log: number; checkpointed: number }>)[0]!
  } finally {
    conn.close()
  }
}

let running: WalCheckpoints | undefined
afterEach(async () => {
  await running?.close()
  running = undefined
})

/** ~4 KiB rows, one commit each: a page or more of -wal per commit. */
function writer() {
  const w = walDb()
  w.db.exec('CREATE TABLE big (b BLOB)')
  const put = w.db.prepare('INSERT INTO big (b) VALUES (randomblob(4000))')
  return { ...w, commits: (n: number) => {
    for (let i = 0; i < n; i++) put.run()
  } }
}

describe('startWalCheckpoints: SQLite WAL checkpoints on a thread of their own', () => {
  it('copies the -wal frames into the main file off the writing thread (whose own checkpoint waits for the backstop), so the -wal file restarts instead of growing', async () => {
    const w = writer()
    running = startWalCheckpoints(w.db, w.file, { everyMs: 20 })
    expect(w.db.pragma('wal_autocheckpoint', { simple: true })).toBe(10_000)
    // 2,000 commits of three pages each (a 4,000-byte row's page, its overflow, the table's), in bursts with the event
    // loop free between them, as a service writes: without a checkpoint the -wal file would hold about 6,000 pages.
    for (let burst = 0; burst < 40; burst++) {
      w.commits(50)
      await sleep(10)
    }
    await until('the thread to copy every frame', () => walState(w.file).log === walState(w.file).checkpointed)
    expect(running.stats().copied).toBeGreaterThan(1)
    const walPages = statSync(`${w.file}-wal`).size / 4096
    expect(walPages).toBeLessThan(3000)
    expect(w.db.prepare('SELECT count(*) AS n FROM big').get()).toEqual({ n: 2000 })
    expect(running.stats().failed).toBe(0)
  })

  it('the thread\'s connection fsyncs (synchronous=FULL): frames count as copied only once the main file is on disk, so a restart of the -wal file loses nothing', () => {
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
    expect(errors[0]?.message).toMatch(/unable to open|does not exist|SQLITE_CANTOPEN|directory does not exist/i)
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
