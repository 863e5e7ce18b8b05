import { describe, expect, it } from 'vitest'
import { formatUnits, showAmount, showWei } from './format.js'

describe('formatUnits', () => {
  it.each([
    ['1500000', 6, '1.5'],
    ['1', 18, '0.000000000000000001'],
    ['1000000000000000000', 18, '1'],
    ['0', 6, '0'],
    ['-20000000', 6, '-20'],
    ['123', 0, '123'],
    ['115792089237316195423570985008687907853269984665640564039457584007913129639935', 18, '115792089237316195423570985008687907853269984665640564039457.584007913129639935'],
  ])('%s with %i decimals is %s', (amount, decimals, shown) => {
    expect(formatUnits(amount, decimals)).toBe(shown)
  })

  it('shows the raw amount beside the human one, and says when decimals are unknown', () => {
    expect(showAmount('1500000', 6, 'TUSD')).toBe('1500000 (1.5 TUSD, 6 decimals)')
    expect(showAmount('1500000', undefined)).toBe('1500000 (smallest units; decimals not given)')
    expect(showWei('500000000000000000')).toBe('500000000000000000 (0.5 native, 18 decimals)')
  })
})
