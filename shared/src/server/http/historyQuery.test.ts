import { describe, expect, it } from 'vitest'
import { clampHistoryLimit, historyIntentId, historyListOptions } from './historyQuery.js'

describe('history query', () => {
  it('clamps limit into 1..100 and defaults to 20 for anything unreadable', () => {
    expect(clampHistoryLimit(undefined)).toBe(20)
    expect(clampHistoryLimit('  ')).toBe(20)
    expect(clampHistoryLimit('abc')).toBe(20)
    expect(clampHistoryLimit('0')).toBe(1)
    expect(clampHistoryLimit('7.9')).toBe(7)
    expect(clampHistoryLimit('1e9')).toBe(100)
    expect(clampHistoryLimit(['5'])).toBe(20)
  })

  it('takes one intent id, the last of several, and none for an empty value', () => {
    expect(historyIntentId('intent-1')).toBe('intent-1')
    expect(historyIntentId(['a', 'b'])).toBe('b')
    expect(historyIntentId('')).toBeUndefined()
    expect(historyIntentId(undefined)).toBeUndefined()
    expect(historyListOptions({ limit: '3', intentId: 'x' })).toEqual({ limit: 3, intentId: 'x' })
    expect(historyListOptions({})).toEqual({ limit: 20 })
  })
})
