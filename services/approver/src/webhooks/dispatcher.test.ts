import { describe, expect, it } from 'vitest'
import { GIVE_UP_AFTER_MS, nextAttemptAt } from './dispatcher.js'

describe('nextAttemptAt', () => {
  it('doubles from the base, capped at an hour', () => {
    expect(nextAttemptAt(0, 1, 1000, 500)).toBe(1500)
    expect(nextAttemptAt(0, 2, 1000, 500)).toBe(2000)
    expect(nextAttemptAt(0, 4, 1000, 500)).toBe(5000)
    expect(nextAttemptAt(0, 40, 1000, 500)).toBe(1000 + 60 * 60_000)
  })

  it('gives up once the next attempt would fall after 24 h', () => {
    expect(nextAttemptAt(0, 30, GIVE_UP_AFTER_MS - 60 * 60_000, 5000)).toBe(GIVE_UP_AFTER_MS)
    expect(nextAttemptAt(0, 30, GIVE_UP_AFTER_MS - 60 * 60_000 + 1, 5000)).toBeNull()
  })
})
