// Group commit for a WAL-mode SQLite database opened with synchronous=NORMAL.
// With synchronous=FULL, SQLite fsyncs the -wal file inside every commit, on
// the calling thread: a process that commits on its event loop (the signer)
// blocks for one fsync per transaction, several milliseconds each on a
// virtual disk. With NORMAL, a commit only write()s its frames to the -wal
// file; this module then makes them durable with fdatasync of that file on
// libuv's thread pool, one fdatasync for every commit marked before it
// started. A caller that replies only after durable() resolves has exactly
// FULL's guarantee for what it replies about (the frames are on disk), and the
// commits that arrived together share one fsync; with `lanes`, a second
// fsync may start while one runs. (A checkpoint, which copies
// frames into the main file, is synced by SQLite itself in NORMAL mode.)
import { closeSync, fdatasync, fdatasyncSync, fsyncSync, openSync } from 'node:fs'
import path from 'node:path'
import { databaseTarget } from './privateFiles.js'

export interface WalSyncStats {
  /** Commits marked with committed(). */
  commits: number
  /** fdatasync calls completed. */
  syncs: number
  /** Their total duration, milliseconds (start to callback). */
  syncMs: number
  /** How many durable() waiters each sync released: size → number of syncs. */
  waitersPerSync: Record<number, number>
}

export interface WalSync {
  /** Marks a commit made on the connection: it needs a sync before anyone replies about it. */
  committed(): void
  /**
   * Resolves once every commit marked before this call is on disk. Calls made
   * while every lane is syncing share the next sync. Rejects when fdatasync fails: the
   * commits are then of unknown durability and must not be replied about;
   * and from then on every call rejects (see `broken` in createWalSync).
   */
  durable(): Promise<void>
  /** The same on the calling thread, for exit paths that cannot await. */
  durableSync(): void
  stats(): WalSyncStats
  /** Resolves once no sync is running; later durable() calls are refused. */
  close(): Promise<void>
}

export interface WalSyncOptions {
  /**
   * How many fdatasyncs may run at once (default 1). With one, commits made
   * while a sync runs wait for it to end and then for a whole sync of their
   * own; with two, their sync starts at once beside it, and a reply waits
   * for about one sync instead of one and a half. Each lane syncs through its
   * own open file description: Linux reports a failed writeback once per
   * open file (errseq), so two syncs through one descriptor could split an
   * error between them and one would report success for frames that were
   * lost. With one each, every sync that covers a failed page reports it.
   */
  lanes?: number
}

interface Waiter {
  upTo: number
  resolve: () => void
  reject: (err: Error) => void
}

/** Syncs `${dbFile}-wal`; the database must be in WAL mode and open on this process's connection. */
export function createWalSync(dbFile: string, opts: WalSyncOptions = {}): WalSync {
  const lanes = opts.lanes ?? 1
  if (!Number.isSafeInteger(lanes) || lanes < 1) throw new RangeError(`WAL sync lanes must be a positive integer, got ${lanes}`)
  // SQLite keeps the -wal file beside the real database file, not beside a link to it.
  const walFile = `${databaseTarget(dbFile)}-wal`
  // What a killed writer committed is read back from the page cache as if it
  // were durable: it is synced before this process can reply about any of it.
  syncLeftoverWal(dbFile)
  // One descriptor per lane and one for durableSync, all opened together
  // before the first sync (see WalSyncOptions.lanes): every sync, on whichever
  // thread, reports a failed writeback of what it covers.
  let fds: number[] | undefined
  const busy: boolean[] = Array.from({ length: lanes }, () => false)
  let running = 0
  let marked = 0
  let synced = 0
  // The newest commit a started sync covers: a sync is started only for commits after it.
  let startedUpTo = 0
  let scheduled = false
  let closed = false
  let syncs = 0
  let syncMs = 0
  const waitersPerSync: Record<number, number> = {}
  // Set by the first failed fdatasync, and never cleared. Linux reports a
  // failed writeback once and marks the pages clean ("fsyncgate"): the next
  // fdatasync returns 0 whether or not the frames reached the disk, so a
  // retry of the same reply (a sign call finding its stored signature) would
  // be told its commits are durable when they may be lost (found by review).
  // Only a restart, after the disk is checked, makes this database usable.
  let broken: Error | undefined
  let waiters: Waiter[] = []
  const idle: Array<() => void> = []

  // The -wal file exists once the connection has written; its directory entry
  // is synced once, so the file itself cannot vanish in a power loss.
  function walFds(): number[] {
    if (fds === undefined) {
      const opened: number[] = []
      try {
        for (let i = 0; i <= lanes; i++) opened.push(openSync(walFile, 'r'))
        const dir = openSync(path.dirname(walFile), 'r')
        try {
          fsyncSync(dir)
        } finally {
          closeSync(dir)
        }
      } catch (err) {
        for (const fd of opened) closeSync(fd)
        throw err
      }
      fds = opened
    }
    return fds
  }

  const settleIdle = (): void => {
    if (running === 0 && waiters.length === 0) for (const done of idle.splice(0)) done()
  }

  /** Releases the waiters a successful sync up to `upTo` covers; returns how many. */
  function release(upTo: number): number {
    synced = Math.max(synced, upTo)
    const covered = waiters.filter((w) => w.upTo <= upTo)
    waiters = waiters.filter((w) => w.upTo > upTo)
    for (const w of covered) w.resolve()
    return covered.length
  }

  /** After a failed sync, on any lane or the calling thread: nobody waiting is ever told durable. */
  function breakWith(err: Error | undefined): void {
    if (err) broken ??= failure(err)
    for (const w of waiters.splice(0)) w.reject(broken!)
    settleIdle()
  }

  function start(): void {
    scheduled = false
    if (broken) return breakWith(undefined)
    if (waiters.length === 0 || marked <= startedUpTo) return
    const lane = busy.indexOf(false)
    if (lane < 0) return
    let file: number
    try {
      file = walFds()[lane]!
    } catch (err) {
      fail(waiters.splice(0), err as Error)
      settleIdle()
      return
    }
    const upTo = marked
    startedUpTo = upTo
    busy[lane] = true
    running += 1
    const t0 = performance.now()
    fdatasync(file, (err) => {
      busy[lane] = false
      running -= 1
      syncs += 1
      syncMs += performance.now() - t0
      // A failure here, or one on another lane or in durableSync meanwhile: nothing is released.
      if (err || broken) return breakWith(err ?? undefined)
      const released = release(upTo)
      waitersPerSync[released] = (waitersPerSync[released] ?? 0) + 1
      start()
      settleIdle()
    })
  }

  function failure(err: Error): Error {
    return new Error(
      `fdatasync of ${walFile} failed; the last commits may not be on disk: ${err.message}. ` +
        'Nothing committed to it is confirmed durable from now on: stop the service, check the disk, and start it again',
    )
  }

  function fail(ws: Waiter[], err: Error): void {
    const e = new Error(`fdatasync of ${walFile} failed; the last commits may not be on disk: ${err.message}`)
    for (const w of ws) w.reject(e)
  }

  return {
    committed() {
      marked += 1
    },
    durable() {
      if (closed) return Promise.reject(new Error(`${dbFile} is closed`))
      if (broken) return Promise.reject(broken)
      if (marked <= synced) return Promise.resolve()
      return new Promise<void>((resolve, reject) => {
        waiters.push({ upTo: marked, resolve, reject })
        // Deferred to the check phase: every commit made while this poll
        // phase handles its sockets joins the same fsync.
        if (running < lanes && !scheduled) {
          scheduled = true
          setImmediate(start)
        }
      })
    },
    durableSync() {
      if (closed) throw new Error(`${dbFile} is closed`)
      if (broken) throw broken
      if (marked <= synced) return
      const upTo = marked
      // Its own descriptor: a lane's fdatasync may be running at the same moment.
      const file = walFds()[lanes]!
      try {
        fdatasyncSync(file)
      } catch (err) {
        breakWith(err as Error)
        throw broken!
      }
      release(upTo)
    },
    stats() {
      return { commits: marked, syncs, syncMs, waitersPerSync: { ...waitersPerSync } }
    },
    async close() {
      closed = true
      if (running > 0 || waiters.length > 0) await new Promise<void>((resolve) => idle.push(resolve))
      for (const fd of fds ?? []) closeSync(fd)
      fds = undefined
    },
  }
}

/**
 * fdatasyncs the commits a process killed before its fsync left in
 * `${dbFile}-wal`. SQLite reads them back from the page cache, so the next
 * process would take them as durable and reply about them (a stored
 * signature, an audit event found there), while a power cut could still
 * lose them. createWalSync calls it, so every database synced through this
 * module (signer.db, audit.db) starts from disk; no -wal file, nothing left.
 */
export function syncLeftoverWal(dbFile: string): void {
  let fd: number
  try {
    fd = openSync(`${databaseTarget(dbFile)}-wal`, 'r')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return
    throw err
  }
  try {
    fdatasyncSync(fd)
  } finally {
    closeSync(fd)
  }
}
