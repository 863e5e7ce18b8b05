import { describe, expect, it } from 'vitest'
import type { PublicClient } from 'viem'
import { estimateFees, FEE_REUSE_MS } from './fees.js'

/** A client whose fee reads are counted and answered when `release` is called. */
function countingClient(baseFee: bigint, tip: bigint) {
  const calls = { block: 0, tip: 0 }
  const waiting: Array<() => void> = []
  const later = <T>(value: T) => new Promise<T>((r) => waiting.push(() => r(value)))
  const client = {
    getBlock: () => (calls.block++, later({ baseFeePerGas: baseFee })),
    estimateMaxPriorityFeePerGas: () => (calls.tip++, later(tip)),
  } as unknown as PublicClient
  const release = () => waiting.splice(0).forEach((go) => go())
  return { client, calls, release }
}

describe('estimateFees', () => {
  it('max fee is twice the base fee plus the tip scaled by speed', async () => {
    const { client, release } = countingClient(100n, 10n)
    const fees = Promise.all([estimateFees(client, 'slow'), estimateFees(client), estimateFees(client, 'fast')])
    release()
    expect(await fees).toEqual([
      { maxPriorityFeePerGas: 8n, maxFeePerGas: 208n },
      { maxPriorityFeePerGas: 10n, maxFeePerGas: 210n },
      { maxPriorityFeePerGas: 15n, maxFeePerGas: 215n },
    ])
  })

  it('callers that ask while a read is in flight share it; a read is reused for FEE_REUSE_MS from its start, then read again', async () => {
    const { client, calls, release } = countingClient(100n, 10n)
    let now = 1_000_000
    const clock = () => now
    const first = Promise.all([estimateFees(client, 'normal', clock), estimateFees(client, 'normal', clock), estimateFees(client, 'normal', clock)])
    expect(calls).toEqual({ block: 1, tip: 1 })
    release()
    await first
    now += FEE_REUSE_MS - 1
    expect(await estimateFees(client, 'fast', clock)).toEqual({ maxPriorityFeePerGas: 15n, maxFeePerGas: 215n })
    expect(calls).toEqual({ block: 1, tip: 1 })
    now += 1
    const again = estimateFees(client, 'normal', clock)
    expect(calls).toEqual({ block: 2, tip: 2 })
    release()
    await again
    // A clock stepped backwards does not stretch a read's life.
    now -= 10
    const stepped = estimateFees(client, 'normal', clock)
    expect(calls).toEqual({ block: 3, tip: 3 })
    release()
    await stepped
  })

  it('a failed read fails the callers that shared it, and the next caller tries again', async () => {
    let blocks = 0
    const client = {
      getBlock: () => (++blocks === 1 ? Promise.reject(new Error('node down')) : Promise.resolve({ baseFeePerGas: 5n })),
      estimateMaxPriorityFeePerGas: () => Promise.resolve(1n),
    } as unknown as PublicClient
    await expect(Promise.all([estimateFees(client), estimateFees(client)])).rejects.toThrow('node down')
    expect(await estimateFees(client)).toEqual({ maxPriorityFeePerGas: 1n, maxFeePerGas: 11n })
    expect(blocks).toBe(2)
  })
})
