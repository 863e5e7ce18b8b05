import { BuildError } from './errors.js'

export const UINT256_MAX = (1n << 256n) - 1n

/**
 * Parses an amount string and checks it fits uint256. Schema-valid intents
 * only reach here, but a malformed string must still be a client error (400),
 * never the SyntaxError BigInt would throw (500).
 */
export function uint256(value: string, field: string): bigint {
  if (typeof value !== 'string' || !/^[0-9]+$/.test(value)) {
    throw new BuildError('invalid_amount', `${field} must be a string of decimal digits; got ${JSON.stringify(value)}`)
  }
  const n = BigInt(value)
  if (n > UINT256_MAX) throw new BuildError('amount_out_of_range', `${field} ${value} does not fit in uint256`)
  return n
}

export function positive(value: string, field: string): bigint {
  const n = uint256(value, field)
  if (n === 0n) throw new BuildError('zero_amount', `${field} must be greater than 0`)
  return n
}
