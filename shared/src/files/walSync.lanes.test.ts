// Two fdatasyncs at once (WalSyncOptions.lanes), with every fdatasync held
// until the test lets it finish (a file of its own: vi.mock replaces node:fs
// for the whole file).
import { describe, expect, it, vi } from 'vitest'

type Held = { fd: number; finish: (err?: NodeJS.ErrnoException) => void }
const held: Held[] = []
// durableSync's fdatasyncs (on the calling thread): the descriptors used, and whether the next one fails.
const onThread = { fds: [] as number[], failNext: false }
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>()
  return {
    ...fs,
    fdatasync: (fd: number, callback: (err: NodeJS.ErrnoException | null) => void) => {
      held.push({
        fd,
        finish: (err) => (err ? setImmediate(() => callback(err)) : fs.fdatasync(fd, callback)),
      })
    },
    fdatasyncSync: (fd: number) => {
      onThread.fds.push(fd)
      if (onThread.failNext) {
        onThread.failNext = false
        throw eio()
      }
      fs.fdatasyncSync(fd)
    },
  }
})

const { createWalSync } = await import('./walSync.js')
const { walDb } = await import('./walSync.testkit.js')

const turn = () => new Promise((r) => setImmediate(r))
function eio() {
  return Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' })
}

/** Commits one row and asks for its durability; the promise records its value once released. */
function commitAndWait(sync: ReturnType<typeof createWalSync>, insert: ReturnType<typeof walDb>['insert'], v: number, released: number[]) {
  insert.run(v)
  sync.committed()
  return sync.durable().then(() => released.push(v))
}

/** Two syncs running at once on a fresh two-lane sync (commits 1 and 2); returns their waits. */
async function twoRunning(released: number[]) {
  held.length = 0
  const { file, db, insert } = walDb()
  const sync = createWalSync(file, { lanes: 2 })
  const waits = [commitAndWait(sync, insert, 1, released)]
  await turn()
  waits.push(commitAndWait(sync, insert, 2, released))
  await turn()
  expect(held).toHaveLength(2)
  return { file, db, insert, sync, waits }
}

describe('WAL group sync with two lanes', () => {
  it('commits made while a sync runs start their own beside it, through another descriptor; whichever ends first releases what it covers', async () => {
    held.length = 0
    const { file, db, insert } = walDb()
    const sync = createWalSync(file, { lanes: 2 })
    const released: number[] = []
    const first = [commitAndWait(sync, insert, 1, released), commitAndWait(sync, insert, 2, released)]
    await turn()
    expect(held).toHaveLength(1)
    const second = commitAndWait(sync, insert, 3, released)
    await turn()
    // Started while the first still runs, on a descriptor of its own.
    expect(held).toHaveLength(2)
    expect(held[1]!.fd).not.toBe(held[0]!.fd)
    // The second covers every commit made before it started, the first's too.
    held[1]!.finish()
    await Promise.all([...first, second])
    expect(released).toEqual([1, 2, 3])
    // The first ends later and releases nothing more; no third sync was needed.
    held[0]!.finish()
    await sync.close()
    expect(held).toHaveLength(2)
    expect(sync.stats()).toEqual({ commits: 3, syncs: 2, syncMs: expect.any(Number), waitersPerSync: { 3: 1, 0: 1 } })
    db.close()
  })

  it('with both lanes busy, later commits share the next sync; with one lane (the default) a second sync waits for the first', async () => {
    const released: number[] = []
    const { file, db, insert, sync: two, waits } = await twoRunning(released)
    waits.push(commitAndWait(two, insert, 3, released), commitAndWait(two, insert, 4, released))
    await turn()
    expect(held).toHaveLength(2)
    held[0]!.finish()
    await waits[0]
    await turn()
    // A lane is free: 3 and 4 go together in the third sync.
    expect(held).toHaveLength(3)
    held[1]!.finish()
    await waits[1]
    held[2]!.finish()
    await Promise.all(waits)
    expect(released).toEqual([1, 2, 3, 4])
    expect(two.stats().waitersPerSync).toEqual({ 1: 2, 2: 1 })
    await two.close()

    held.length = 0
    const one = createWalSync(file)
    const w1 = commitAndWait(one, insert, 5, released)
    await turn()
    const w2 = commitAndWait(one, insert, 6, released)
    await turn()
    expect(held).toHaveLength(1)
    held[0]!.finish()
    await w1
    await turn()
    expect(held).toHaveLength(2)
    expect(held[1]!.fd).toBe(held[0]!.fd)
    held[1]!.finish()
    await w2
    await one.close()
    db.close()
  })

  it('a failed sync on one lane releases nothing the other lane ends with afterwards, and nothing is durable from then on', async () => {
    const released: number[] = []
    const { db, insert, sync, waits: [a, b] } = await twoRunning(released)
    held[0]!.finish(eio())
    await expect(a).rejects.toThrow(/may not be on disk: EIO/)
    await expect(b).rejects.toThrow(/may not be on disk: EIO/)
    // The second lane's fdatasync succeeds afterwards: it must not make anything durable.
    held[1]!.finish()
    await turn()
    await turn()
    expect(released).toEqual([])
    insert.run(3)
    sync.committed()
    await expect(sync.durable()).rejects.toThrow(/may not be on disk/)
    await sync.close()
    db.close()
  })

  it('close() waits for both lanes before closing their descriptors', async () => {
    const released: number[] = []
    const { db, sync, waits } = await twoRunning(released)
    let closed = false
    const closing = sync.close().then(() => (closed = true))
    held[1]!.finish()
    await waits[1]
    await turn()
    // The first lane still runs: its descriptor stays open.
    expect(closed).toBe(false)
    held[0]!.finish()
    await closing
    expect(released).toEqual([1, 2])
    db.close()
  })

  it('durableSync on the calling thread while a lane runs: its own descriptor; its failure rejects the lane\'s waiters, and the lane ending well releases nothing (found by review)', async () => {
    const released: number[] = []
    const { db, insert, sync, waits } = await twoRunning(released)
    const settled = waits.map((w) => w.then(() => 'resolved', (e: Error) => e.message))
    insert.run(3)
    sync.committed()
    onThread.fds.length = 0
    onThread.failNext = true
    expect(() => sync.durableSync()).toThrow(/may not be on disk: EIO/)
    // Not one of the lanes' descriptors: a writeback error cannot go to one sync and not the other.
    expect(onThread.fds).toHaveLength(1)
    expect(held.map((h) => h.fd)).not.toContain(onThread.fds[0])
    expect(await Promise.all(settled)).toEqual([expect.stringMatching(/may not be on disk: EIO/), expect.stringMatching(/may not be on disk: EIO/)])
    held[0]!.finish()
    held[1]!.finish()
    await sync.close()
    expect(released).toEqual([])
    db.close()
  })

  it('a sync scheduled before a failure is not started after it', async () => {
    held.length = 0
    const { file, db, insert } = walDb()
    const sync = createWalSync(file, { lanes: 2 })
    insert.run(1)
    sync.committed()
    const waiting = sync.durable().then(() => 'resolved', (e: Error) => e.message)
    // The failure comes in the same turn, before the scheduled start runs.
    onThread.failNext = true
    expect(() => sync.durableSync()).toThrow(/may not be on disk/)
    expect(await waiting).toMatch(/may not be on disk: EIO/)
    await turn()
    expect(held).toHaveLength(0)
    await sync.close()
    expect(() => sync.durableSync()).toThrow(/closed/)
    db.close()
  })

  it('durableSync releases the waiters it covers', async () => {
    const released: number[] = []
    const { db, sync, waits } = await twoRunning(released)
    sync.durableSync()
    await Promise.all(waits)
    expect(released).toEqual([1, 2])
    held[0]!.finish()
    held[1]!.finish()
    await sync.close()
    db.close()
  })

  it('refuses a lane count that is not a positive integer', () => {
    const { file, db } = walDb()
    expect(() => createWalSync(file, { lanes: 0 })).toThrow(/lanes must be a positive integer, got 0/)
    db.close()
  })
})
