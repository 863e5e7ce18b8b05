import { BuildError } from './errors.js'

const UINT256_MAX = (1n << 256n) - 1n

/** Parses a schema-valid amount string and checks it fits uint256. */
export function uint256(value: string, field: string): bigint {
  const n = BigInt(value)
  if (n > UINT256_MAX) throw new BuildError('amount_out_of_range', `${field} ${value} does not fit in uint256`)
  return n
}

export function positive(value: string, field: string): bigint {
  const n = uint256(value, field)
  if (n === 0n) throw new BuildError('zero_amount', `${field} must be greater than 0`)
  return n
}
