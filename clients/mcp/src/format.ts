// Amounts as a model and a human read them: the exact smallest-unit string,
// and the same number with its decimals applied when they are known.

/** "1500000" with 6 decimals → "1.5". Exact (string arithmetic), no rounding. */
export function formatUnits(amount: string, decimals: number): string {
  const negative = amount.startsWith('-')
  const digits = (negative ? amount.slice(1) : amount).replace(/^0+(?=\d)/, '')
  if (decimals === 0) return (negative ? '-' : '') + digits
  const padded = digits.padStart(decimals + 1, '0')
  const whole = padded.slice(0, -decimals)
  const fraction = padded.slice(-decimals).replace(/0+$/, '')
  return (negative ? '-' : '') + whole + (fraction ? '.' + fraction : '')
}

/** "1500000 (1.5 TUSD, 6 decimals)", or the bare amount "+ smallest units" when decimals are unknown. */
export function showAmount(amount: string, decimals: number | undefined, symbol?: string): string {
  if (decimals === undefined) return `${amount} (smallest units; decimals not given)`
  return `${amount} (${formatUnits(amount, decimals)}${symbol ? ' ' + symbol : ''}, ${decimals} decimals)`
}

/**
 * An amount as the model gave it, in the smallest unit, with no decimals or
 * symbol: those a model declares are only what it believes, and a result
 * that states them as fact would repeat a wrong belief back to it. The
 * service's description of the transaction has the chain's own.
 */
export const inSmallestUnits = (amount: string): string => `${amount} smallest units`

/** Native currency amounts are always in wei, 18 decimals. */
export const showWei = (wei: string): string => showAmount(wei, 18, 'native')
