import { describe, expect, it } from 'vitest'
import type { TxIntent } from '@countersign/shared'
import { actions, makeIntent, USDC_BASE, WETH_BASE } from '@countersign/shared/testing/intents'
import { slippageProblem as problemWith } from './slippage.js'

/** The default policy ceiling (300 bps) unless a test says otherwise. */
const CEIL = 300
const slippageProblem = (ceiling: number, intent: TxIntent, diffs: Parameters<typeof problemWith>[1]) => problemWith(intent, diffs, ceiling)

const exactIn = (minAmountOut: string, maxSlippageBps: number): TxIntent => {
  const i = makeIntent({ action: { ...actions.swapIn(), minAmountOut } as TxIntent['action'] })
  return { ...i, constraints: { ...i.constraints, maxSlippageBps } }
}
const exactOut = (maxAmountIn: string, maxSlippageBps: number): TxIntent => {
  const i = makeIntent({ action: { ...actions.swapOut(), maxAmountIn } as TxIntent['action'] })
  return { ...i, constraints: { ...i.constraints, maxSlippageBps } }
}
// Sells 1 USDC, the simulation gets 1,000,000 wei of WETH; buys WETH for 2 USDC.
const sold = [{ token: USDC_BASE, change: '-1000000' }, { token: WETH_BASE, change: '1000000' }]
const bought = [{ token: USDC_BASE, change: '-2000000' }, { token: WETH_BASE, change: '1000000000000' }]

describe('slippageProblem', () => {
  it('minAmountOut 0 accepts any price, whatever maxSlippageBps or the simulation say', () => {
    expect(slippageProblem(CEIL, exactIn('0', 0), sold)).toMatch(/minAmountOut is 0/)
    expect(slippageProblem(CEIL, exactIn('0', 50), null)).toMatch(/minAmountOut is 0/)
  })

  it('exact in: minAmountOut at or above the simulated output less maxSlippageBps is protected; below it is not', () => {
    expect(slippageProblem(CEIL, exactIn('990000', 100), sold)).toBeNull()
    expect(slippageProblem(CEIL, exactIn('1000000', 0), sold)).toBeNull()
    expect(slippageProblem(CEIL, exactIn('989999', 100), sold)).toBe('minAmountOut 989999 is below 990000, the simulated output 1000000 less maxSlippageBps 100: the swap is not protected to that slippage')
    // The review's declared 0 bps with a bound of 1 wei.
    expect(slippageProblem(CEIL, exactIn('1', 0), sold)).toMatch(/below 1000000/)
  })

  it('exact out: maxAmountIn at or below the simulated input plus maxSlippageBps is protected; above it is not', () => {
    expect(slippageProblem(CEIL, exactOut('2020000', 100), bought)).toBeNull()
    expect(slippageProblem(CEIL, exactOut('2020001', 100), bought)).toBe('maxAmountIn 2020001 is above 2020000, the simulated input 2000000 plus maxSlippageBps 100: the swap is not protected to that slippage')
  })

  it('the policy ceiling bounds what the intent declares: a 1 wei minimum with 10000 bps is not protected (found by review)', () => {
    // The review's swap: maxSlippageBps 10000 made the floor 0, so minAmountOut 1 passed and no operator was asked.
    expect(slippageProblem(CEIL, exactIn('1', 10_000), sold)).toBe(
      "minAmountOut 1 is below 970000, the simulated output 1000000 less the policy's maxSwapSlippageBps 300 (the intent declares 10000): the swap is not protected to that slippage",
    )
    expect(slippageProblem(CEIL, exactIn('970000', 10_000), sold)).toBeNull()
    expect(slippageProblem(CEIL, exactIn('969999', 500), sold)).toMatch(/below 970000.*maxSwapSlippageBps 300 \(the intent declares 500\)/)
    expect(slippageProblem(CEIL, exactOut('2060001', 10_000), bought)).toMatch(/above 2060000, the simulated input 2000000 plus the policy's maxSwapSlippageBps 300/)
    // A policy that allows more lets the declared figure decide, up to its own ceiling.
    expect(slippageProblem(10_000, exactIn('1', 10_000), sold)).toBeNull()
    expect(slippageProblem(1_000, exactIn('900000', 10_000), sold)).toBeNull()
  })

  it('a bound the simulation cannot be held to (no traced transfer of the token) is not taken on trust', () => {
    expect(slippageProblem(CEIL, exactIn('990000', 100), [{ token: USDC_BASE, change: '-1000000' }])).toMatch(/could not be checked/)
    expect(slippageProblem(CEIL, exactOut('2020000', 100), [])).toMatch(/could not be checked/)
  })

  it('a swap whose simulation did not succeed has a bound nobody checked; other actions are not swaps', () => {
    expect(slippageProblem(CEIL, exactIn('1', 0), null)).toMatch(/the simulation did not succeed, so minAmountOut 1 could not be checked/)
    expect(slippageProblem(CEIL, exactOut('2020001', 100), null)).toMatch(/the simulation did not succeed, so maxAmountIn 2020001 could not be checked/)
    expect(slippageProblem(CEIL, makeIntent({ action: actions.transfer() }), sold)).toBeNull()
  })
})
