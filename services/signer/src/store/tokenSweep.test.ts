import { describe, expect, it } from 'vitest'
import { startTokenSweep } from './tokenSweep.js'

describe('startTokenSweep', () => {
  it('a sweep that throws (signer.db locked, disk full) is reported and runs again; it never escapes the timer', async () => {
    const errors: string[] = []
    let calls = 0
    const stop = startTokenSweep(
      () => {
        calls += 1
        if (calls <= 2) throw new Error('database is locked')
        return 0
      },
      10,
      (err) => errors.push(err.message),
    )
    try {
      for (let i = 0; i < 200 && calls < 4; i++) await new Promise((r) => setTimeout(r, 5))
      expect(calls).toBeGreaterThanOrEqual(4)
      expect(errors).toEqual(['database is locked', 'database is locked'])
    } finally {
      stop()
    }
  })
})
