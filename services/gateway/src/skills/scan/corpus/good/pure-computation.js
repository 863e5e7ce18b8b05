// Pure computation: fee and slippage maths on bigint amounts.
export const BPS = 10_000n

export function applySlippage(amount, bps) {
  if (typeof amount !== 'bigint' || bps < 0 || bps > 10_000) throw new RangeError('bad input')
  return (amount * (BPS - BigInt(bps))) / BPS
}

export function fibonacci(n) {
  let [a, b] = [0n, 1n]
  for (let i = 0; i < n; i++) [a, b] = [b, a + b]
  return a
}

export function median(values) {
  const sorted = [...values].sort((x, y) => x - y)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 0 ? (sorted[mid - 1] + sorted[mid]) / 2 : sorted[mid]
}

export const summary = {
  fee: applySlippage(1_000_000n, 50).toString(),
  fib: fibonacci(40).toString(10),
  median: median([3, 1, 4, 1, 5, 9, 2, 6]),
  hex: (255).toString(16).padStart(4, '0'),
}
