import { describe, expect, it } from 'vitest'
import type { ApprovalCard } from '../card/renderCard.js'
import { emptyWatch, target, withEnded, withList, withRequest, type Pending, type WatchState } from './watchNumbers.js'

const card = (title: string): ApprovalCard => ({ title, riskScore: 0, tone: 'green', alerts: [], lines: [], lists: [], confirm: false })
const req = (id: string, title = `send ${id}`): Pending => ({ requestId: id, ttlSeconds: 300, card: card(title) })
const numbers = (s: WatchState) => s.shown.map((e) => [e.n, e.request.requestId])

describe('watch numbers', () => {
  it('a request keeps its number when an earlier one ends; a new one gets the next unused number, never an ended one', () => {
    let s = withList(emptyWatch(), [req('a'), req('b'), req('c')])
    expect(numbers(s)).toEqual([[1, 'a'], [2, 'b'], [3, 'c']])
    s = withEnded(s, 'a', 'expired')
    expect(numbers(s)).toEqual([[2, 'b'], [3, 'c']])
    expect(target(s, 2)).toEqual({ kind: 'pending', request: req('b') })
    expect(target(s, 1)).toEqual({ kind: 'ended', ended: { requestId: 'a', title: 'send a', end: 'expired' } })
    s = withRequest(s, req('d'))
    expect(numbers(s)).toEqual([[2, 'b'], [3, 'c'], [4, 'd']])
    expect(target(s, 1).kind).toBe('ended')
    expect(target(s, 5)).toEqual({ kind: 'unknown' })
    expect(target(s, 0)).toEqual({ kind: 'unknown' })
  })

  it('a quorum update replaces the card under the same number; a fresh list ends what it no longer has and appends what is new', () => {
    let s = withList(emptyWatch(), [req('a'), req('b')])
    s = withRequest(s, req('a', 'send a, 1 of 2 approvals'))
    expect(s.shown.map((e) => [e.n, e.request.card.title])).toEqual([[1, 'send a, 1 of 2 approvals'], [2, 'send b']])
    s = withList(s, [req('c'), req('b')])
    expect(numbers(s)).toEqual([[2, 'b'], [3, 'c']])
    expect(target(s, 1)).toEqual({ kind: 'ended', ended: { requestId: 'a', title: 'send a, 1 of 2 approvals', end: 'ended' } })
  })

  it('an end for a request never shown changes nothing; the states before stay as they were', () => {
    const s = withList(emptyWatch(), [req('a')])
    expect(withEnded(s, 'zzz')).toBe(s)
    withEnded(s, 'a')
    withRequest(s, req('b'))
    expect(numbers(s)).toEqual([[1, 'a']])
    expect(s.ended.size).toBe(0)
    expect(s.next).toBe(2)
  })
})
