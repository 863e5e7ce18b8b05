import { mkdtempSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { createTurnTransactions } from './turnTransactions.js'

const open: Database.Database[] = []
afterEach(() => {
  for (const db of open.splice(0)) db.close()
})

function setup() {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'cs-turn-')), 'signer.db')
  const db = new Database(file)
  db.pragma('journal_mode = WAL')
  db.exec('CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER NOT NULL)')
  open.push(db)
  const insert = db.prepare('INSERT INTO t (k, v) VALUES (?, ?)')
  const count = db.prepare<[], { n: number }>('SELECT count(*) AS n FROM t')
  const rows = () => db.prepare<[], { k: string; v: number }>('SELECT k, v FROM t ORDER BY k').all()
  return { file, db, turns: createTurnTransactions(db), insert, count, rows }
}

describe('one signer.db transaction per event-loop turn', () => {
  it('jobs queued in one turn share one transaction, in order, each seeing the earlier ones; later turns get their own', async () => {
    const s = setup()
    const first = [
      s.turns.run(() => s.insert.run('a', 1).changes),
      s.turns.run(() => s.count.get()!.n),
      s.turns.run(() => s.insert.run('b', 2).changes),
    ]
    expect(s.rows()).toEqual([]) // nothing before the turn's end
    expect(await Promise.all(first)).toEqual([1, 1, 1])
    expect(s.turns.stats()).toEqual({ transactions: 1, jobs: 3 })
    await s.turns.run(() => s.insert.run('c', 3))
    expect(s.turns.stats()).toEqual({ transactions: 2, jobs: 4 })
    expect(s.rows().map((r) => r.k)).toEqual(['a', 'b', 'c'])
  })

  it('a job that throws rolls back alone and rejects alone', async () => {
    const s = setup()
    const results = await Promise.allSettled([
      s.turns.run(() => s.insert.run('a', 1)),
      s.turns.run(() => {
        s.insert.run('half', 9)
        s.insert.run('a', 2) // primary key taken: throws after a write of its own
      }),
      s.turns.run(() => s.insert.run('b', 2)),
    ])
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    expect(String((results[1] as PromiseRejectedResult).reason)).toMatch(/UNIQUE constraint failed/)
    expect(s.rows()).toEqual([
      { k: 'a', v: 1 },
      { k: 'b', v: 2 },
    ])
  })

  it('a transaction that cannot start (another writer holds the lock) rejects every job of the turn, and writes none', async () => {
    const s = setup()
    s.db.pragma('busy_timeout = 0')
    const other = new Database(s.file)
    open.push(other)
    other.exec('BEGIN IMMEDIATE')
    const results = await Promise.allSettled([s.turns.run(() => s.insert.run('a', 1)), s.turns.run(() => s.insert.run('b', 2))])
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected'])
    expect(String((results[0] as PromiseRejectedResult).reason)).toMatch(/database is locked/)
    other.exec('ROLLBACK')
    expect(s.rows()).toEqual([])
    expect(s.turns.stats()).toEqual({ transactions: 0, jobs: 0 })
    // The next turn works.
    await s.turns.run(() => s.insert.run('c', 3))
    expect(s.rows()).toEqual([{ k: 'c', v: 3 }])
  })
})
