import { describe, expect, it } from 'vitest'
import type { TxIntent } from '@countersign/shared'
import { actions, makeIntent, USDC_BASE, WETH_BASE } from '@countersign/shared/testing/intents'
import { slippageProblem } from './slippage.js'

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
    expect(slippageProblem(exactIn('0', 0), sold)).toMatch(/minAmountOut is 0/)
    expect(slippageProblem(exactIn('0', 50), null)).toMatch(/minAmountOut is 0/)
  })

  it('exact in: minAmountOut at or above the simulated output less maxSlippageBps is protected; below it is not', () => {
    expect(slippageProblem(exactIn('990000', 100), sold)).toBeNull()
    expect(slippageProblem(exactIn('1000000', 0), sold)).toBeNull()
    expect(slippageProblem(exactIn('989999', 100), sold)).toBe('minAmountOut 989999 is below 990000, the simulated output 1000000 less maxSlippageBps 100: the swap is not protected to its declared slippage')
    // The review's declared 0 bps with a bound of 1 wei.
    expect(slippageProblem(exactIn('1', 0), sold)).toMatch(/below 1000000/)
  })

  it('exact out: maxAmountIn at or below the simulated input plus maxSlippageBps is protected; above it is not', () => {
    expect(slippageProblem(exactOut('2020000', 100), bought)).toBeNull()
    expect(slippageProblem(exactOut('2020001', 100), bought)).toBe('maxAmountIn 2020001 is above 2020000, the simulated input 2000000 plus maxSlippageBps 100: the swap is not protected to its declared slippage')
  })

  it('a bound the simulation cannot be held to (no traced transfer of the token) is not taken on trust', () => {
    expect(slippageProblem(exactIn('990000', 100), [{ token: USDC_BASE, change: '-1000000' }])).toMatch(/could not be checked/)
    expect(slippageProblem(exactOut('2020000', 100), [])).toMatch(/could not be checked/)
  })

  it('a swap that did not simulate is left to simulation_reverted; other actions are not swaps', () => {
    expect(slippageProblem(exactIn('1', 0), null)).toBeNull()
    expect(slippageProblem(exactOut('2020001', 100), null)).toBeNull()
    expect(slippageProblem(makeIntent({ action: actions.transfer() }), sold)).toBeNull()
  })
})
