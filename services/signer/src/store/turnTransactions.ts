import type Database from 'better-sqlite3'

/**
 * One signer.db transaction per event-loop turn. The signer's event loop
 * commits on its own thread, and every commit costs a write lock and WAL page
 * writes (under 8 concurrent callers, the commits of single signatures were
 * the largest cost after the signing itself: bench/RESULTS.md 2026-11-26).
 * Jobs queued in one turn (the signatures that finished together) run in one
 * BEGIN IMMEDIATE … COMMIT, in the order queued, each in its own savepoint:
 * a job that throws rolls back alone and rejects alone, and a later job sees
 * what the earlier ones wrote, as with transactions one after the other.
 * A job's promise resolves with what it returned once the whole transaction
 * has committed (durability is the caller's: WalSync). A failed commit
 * rejects every job of the batch, none of whose writes then exist.
 */
export interface TurnTransactions {
  run<T>(job: () => T): Promise<T>
  /** Transactions committed and jobs run in them (the benchmark's batch size). */
  stats(): { transactions: number; jobs: number }
}

type Queued = { job: () => unknown; resolve: (value: unknown) => void; reject: (err: unknown) => void }
type Result = { ok: true; value: unknown } | { ok: false; err: unknown }

export function createTurnTransactions(db: Database.Database): TurnTransactions {
  let queue: Queued[] = []
  let transactions = 0
  let jobsRun = 0
  // Called inside runAll: better-sqlite3 makes a nested transaction a savepoint.
  const inSavepoint = db.transaction((job: () => unknown) => job())
  const runAll = db.transaction((jobs: Queued[]): Result[] =>
    jobs.map((q) => {
      try {
        return { ok: true, value: inSavepoint(q.job) }
      } catch (err) {
        return { ok: false, err }
      }
    }),
  )

  function flush(): void {
    const jobs = queue
    queue = []
    let results: Result[]
    try {
      results = runAll.immediate(jobs)
    } catch (err) {
      for (const q of jobs) q.reject(err)
      return
    }
    transactions += 1
    jobsRun += jobs.length
    jobs.forEach((q, i) => {
      const r = results[i]!
      if (r.ok) q.resolve(r.value)
      else q.reject(r.err)
    })
  }

  return {
    run<T>(job: () => T): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        if (queue.length === 0) setImmediate(flush)
        queue.push({ job, resolve: resolve as (value: unknown) => void, reject })
      })
    },
    stats: () => ({ transactions, jobs: jobsRun }),
  }
}
