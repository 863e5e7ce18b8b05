import { describe, expect, it } from 'vitest'
import type { ApprovalOutcome } from '@countersign/shared'
import { DecisionFeed } from './decisionFeed.js'

const ended = (n: number): ApprovalOutcome => ({ approved: false, requestId: `r${n}`, txRequestHash: '0x', reason: 'withdrawn' })

describe('DecisionFeed', () => {
  it('a first call learns the position only; later calls get what ended since, in order', () => {
    const feed = new DecisionFeed()
    feed.push(ended(0))
    const start = feed.since(null)
    expect(start).toMatchObject({ reset: false, outcomes: [] })
    feed.push(ended(1))
    feed.push(ended(2))
    const next = feed.since(start.cursor)
    expect(next.outcomes.map((o) => o.requestId)).toEqual(['r1', 'r2'])
    expect(feed.since(next.cursor).outcomes).toEqual([])
  })

  it('pages long runs, the cursor pointing at the last one returned', () => {
    const feed = new DecisionFeed(100, 4)
    const start = feed.since(null).cursor
    for (let n = 0; n < 10; n++) feed.push(ended(n))
    const a = feed.since(start)
    expect(a.outcomes.map((o) => o.requestId)).toEqual(['r0', 'r1', 'r2', 'r3'])
    const b = feed.since(a.cursor)
    expect(b.outcomes.map((o) => o.requestId)).toEqual(['r4', 'r5', 'r6', 'r7'])
    expect(feed.since(b.cursor).outcomes.map((o) => o.requestId)).toEqual(['r8', 'r9'])
  })

  it('answers reset for a cursor of another epoch (a restarted approver), from the future, garbage, or older than what is kept', () => {
    const feed = new DecisionFeed(3)
    const start = feed.since(null).cursor
    expect(new DecisionFeed().since(start)).toMatchObject({ reset: true, outcomes: [] })
    expect(feed.since(start.replace(/\.\d+$/, '.7'))).toMatchObject({ reset: true })
    expect(feed.since('garbage')).toMatchObject({ reset: true })
    for (let n = 0; n < 5; n++) feed.push(ended(n))
    // r0 and r1 were dropped: a caller at the start would miss them.
    expect(feed.since(start)).toMatchObject({ reset: true })
  })

  it('keeps at least the latest `retain` ends across its trims: a caller that far behind gets every end since its cursor, in order', () => {
    const feed = new DecisionFeed(8, 100)
    let cursor = feed.since(null).cursor
    for (let n = 0; n < 100; n++) {
      feed.push(ended(n))
      if (n % 8 !== 7) continue
      const got = feed.since(cursor)
      expect(got.reset).toBe(false)
      expect(got.outcomes.map((o) => o.requestId)).toEqual(Array.from({ length: 8 }, (_, i) => `r${n - 7 + i}`))
      cursor = got.cursor
    }
    // Further behind than anything the feed can still hold (8 and a quarter): that caller must ask again instead of missing one.
    const behind = feed.since(cursor)
    for (let n = 100; n < 111; n++) feed.push(ended(n))
    expect(feed.since(behind.cursor)).toMatchObject({ reset: true })
  })
})
