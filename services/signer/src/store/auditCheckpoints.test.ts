import { mkdtempSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createAuditCheckpoints, HISTORY_KEEP_ALL_MS } from './auditCheckpoints.js'
import { openSignerDb, type SignerDb } from './signerDb.js'

let opened: SignerDb | undefined
afterEach(async () => {
  opened?.db.close()
  await opened?.wal.close()
  opened = undefined
})

const hash = (n: number) => `0x${n.toString(16).padStart(64, '0')}`
const HOUR = 3_600_000

function setup() {
  opened = openSignerDb(path.join(mkdtempSync(path.join(os.tmpdir(), 'cs-checkpoints-')), 'signer.db'))
  return { db: opened.db, checkpoints: createAuditCheckpoints(opened.db) }
}

describe('the checkpoint history a re-anchor checks a log against', () => {
  it('vouches for the newest sealed row or checkpoint row at or below a seq, with the hash it had', () => {
    const { checkpoints } = setup()
    checkpoints.record({ seq: 4, hash: hash(4), sealed: { seq: 3, hash: hash(3) } }, 1000)
    checkpoints.record({ seq: 9, hash: hash(9), sealed: { seq: 8, hash: hash(8) } }, 2000)
    expect(checkpoints.newestVouchedAtOrBelow(2)).toBeNull()
    expect(checkpoints.newestVouchedAtOrBelow(3)).toEqual({ seq: 3, hash: hash(3), writtenAt: 1000 })
    expect(checkpoints.newestVouchedAtOrBelow(7)).toEqual({ seq: 4, hash: hash(4), writtenAt: 1000 })
    expect(checkpoints.newestVouchedAtOrBelow(100)).toEqual({ seq: 9, hash: hash(9), writtenAt: 2000 })
  })

  it('a re-anchor drops what was recorded at and past its rows (another timeline), and records its own whatever its seq', () => {
    const { checkpoints } = setup()
    checkpoints.record({ seq: 4, hash: hash(4), sealed: { seq: 3, hash: hash(3) } }, 1000)
    checkpoints.record({ seq: 9, hash: hash(9), sealed: { seq: 8, hash: hash(8) } }, 2000)
    checkpoints.reanchor({ seq: 7, hash: hash(77), sealed: { seq: 6, hash: hash(66) } }, 3000)
    expect(checkpoints.latest()).toMatchObject({ seq: 7, hash: hash(77) })
    expect(checkpoints.newestVouchedAtOrBelow(100)).toEqual({ seq: 7, hash: hash(77), writtenAt: 3000 })
    expect(checkpoints.newestVouchedAtOrBelow(5)).toEqual({ seq: 4, hash: hash(4), writtenAt: 1000 })
  })

  it('keeps every checkpoint of the last day and the first of each older hour (thinned once every 1,000 records)', () => {
    const { db, checkpoints } = setup()
    const now = 10 * 24 * HOUR
    // 1,000 checkpoints, one every 5 minutes: the oldest about three and a half days back.
    for (let i = 0; i < 1000; i++) {
      const at = now - (999 - i) * 5 * 60_000
      checkpoints.record({ seq: 2 * i + 2, hash: hash(2 * i + 2), sealed: { seq: 2 * i + 1, hash: hash(2 * i + 1) } }, at)
    }
    const rows = db.prepare<[], { written_at: number }>('SELECT written_at FROM audit_checkpoint_history ORDER BY head_seq').all()
    const recent = rows.filter((r) => r.written_at >= now - HISTORY_KEEP_ALL_MS)
    const older = rows.filter((r) => r.written_at < now - HISTORY_KEEP_ALL_MS)
    expect(recent).toHaveLength(24 * 12 + 1)
    expect(new Set(older.map((r) => Math.floor(r.written_at / HOUR))).size).toBe(older.length)
    expect(older.length).toBeGreaterThan(50)
    expect(rows.length).toBeLessThan(400)
  })

  it('the backfill after an upgrade adds sealed rows once, in one call, and leaves what is there', () => {
    const { checkpoints } = setup()
    expect(checkpoints.historyEmpty()).toBe(true)
    checkpoints.rememberSealed([
      { seq: 3, hash: hash(3), writtenAt: 1 },
      { seq: 8, hash: hash(8), writtenAt: 2 },
    ])
    checkpoints.rememberSealed([{ seq: 8, hash: hash(99), writtenAt: 3 }])
    expect(checkpoints.historyEmpty()).toBe(false)
    expect(checkpoints.newestVouchedAtOrBelow(9)).toEqual({ seq: 8, hash: hash(8), writtenAt: 2 })
  })
})
