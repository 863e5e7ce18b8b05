import { describe, expect, it } from 'vitest'
import { createRecentPreflights, PREFLIGHT_REUSE_MS, type SimulationFacts } from './recentPreflights.js'

const facts = (simulationSuccess: boolean, gasEstimate: bigint): SimulationFacts => ({ simulationSuccess, gasEstimate, tokens: [], lookalikes: [], balanceDiffs: simulationSuccess ? [] : null })

describe('recent preflights', () => {
  it('gives back a simulation of the same txRequestHash for 120 s, then forgets it', () => {
    let now = 1_000_000
    const recent = createRecentPreflights(() => now)
    recent.remember('0xaa', facts(true, 50_000n))
    expect(recent.get('0xaa')).toEqual(facts(true, 50_000n))
    expect(recent.get('0xbb')).toBeUndefined()
    now += PREFLIGHT_REUSE_MS
    expect(recent.get('0xaa')).toBeDefined()
    now += 1
    expect(recent.get('0xaa')).toBeUndefined()
  })

  it('a newer simulation of the same transaction replaces the older one', () => {
    let now = 0
    const recent = createRecentPreflights(() => now)
    recent.remember('0xaa', facts(true, 1n))
    now += 100_000
    recent.remember('0xaa', facts(false, 2n))
    now += 100_000
    expect(recent.get('0xaa')).toEqual(facts(false, 2n))
  })

  it('keeps at most 10,000 entries, dropping the oldest', () => {
    const recent = createRecentPreflights(() => 0)
    for (let n = 0; n <= 10_000; n++) recent.remember(`0x${n}`, facts(true, 0n))
    expect(recent.get('0x0')).toBeUndefined()
    expect(recent.get('0x1')).toBeDefined()
    expect(recent.get('0x10000')).toBeDefined()
  })
})
