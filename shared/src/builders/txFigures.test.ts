import { describe, expect, it } from 'vitest'
import { MAX_TX_GAS, MAX_UINT256, txFiguresProblem } from './txFigures.js'

describe('txFiguresProblem', () => {
  const ok = { gas: 21_000n, maxFeePerGas: 2n, maxPriorityFeePerGas: 1n }
  it('accepts what a transaction can carry, at both ends', () => {
    expect(txFiguresProblem(ok)).toBeNull()
    expect(txFiguresProblem({ gas: MAX_TX_GAS, maxFeePerGas: MAX_UINT256, maxPriorityFeePerGas: MAX_UINT256 })).toBeNull()
  })
  it.each([
    ['gas below 21,000', { ...ok, gas: 0n }, /below the 21000/],
    ['gas beyond 64 bits', { ...ok, gas: MAX_TX_GAS + 1n }, /64-bit/],
    ['a fee beyond 256 bits', { ...ok, maxFeePerGas: MAX_UINT256 + 1n }, /256 bits/],
    ['a tip above the fee cap', { ...ok, maxPriorityFeePerGas: 3n }, /must not exceed/],
  ])('names %s', (_what, figures, problem) => {
    expect(txFiguresProblem(figures)).toMatch(problem)
  })
})
