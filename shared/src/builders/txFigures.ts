/** The largest value an EVM fee field can carry. */
export const MAX_UINT256 = 2n ** 256n - 1n
/** A transaction's gas limit is a 64-bit field. */
export const MAX_TX_GAS = 2n ** 64n - 1n
/** Every transaction costs at least this much gas; less can never be mined. */
export const MIN_TX_GAS = 21_000n

export interface TxFigures {
  gas: bigint
  maxFeePerGas: bigint
  maxPriorityFeePerGas: bigint
}

/**
 * Why no EIP-1559 transaction can carry these figures, or null. The gateway
 * reads them from a chain node, and checks them before it asks the signer;
 * the signer checks them again before it signs (a signature for a
 * transaction no node accepts would still consume an approval token).
 */
export function txFiguresProblem(f: TxFigures): string | null {
  if (f.gas < MIN_TX_GAS) return `gas limit ${f.gas} is below the ${MIN_TX_GAS} every transaction costs`
  if (f.gas > MAX_TX_GAS) return `gas limit ${f.gas} does not fit the transaction's 64-bit field`
  if (f.maxFeePerGas > MAX_UINT256) return `maxFeePerGas ${f.maxFeePerGas} does not fit 256 bits`
  if (f.maxPriorityFeePerGas > f.maxFeePerGas) return 'maxPriorityFeePerGas must not exceed maxFeePerGas'
  return null
}
