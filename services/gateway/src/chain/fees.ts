import type { PublicClient } from 'viem'

export type Speed = 'slow' | 'normal' | 'fast'

/** Tip multipliers in percent of the node's suggested priority fee. */
const TIP_PERCENT: Record<Speed, bigint> = { slow: 80n, normal: 100n, fast: 150n }

export interface Fees {
  maxFeePerGas: bigint
  maxPriorityFeePerGas: bigint
}

/**
 * EIP-1559 fees from the chain: the node's suggested tip scaled by speed, and
 * a max fee of twice the latest base fee plus the tip, which survives six
 * full blocks of base-fee growth.
 */
export async function estimateFees(client: PublicClient, speed: Speed = 'normal'): Promise<Fees> {
  const [block, suggestedTip] = await Promise.all([
    client.getBlock({ blockTag: 'latest' }),
    client.estimateMaxPriorityFeePerGas().catch(() => 1_000_000_000n),
  ])
  const baseFee = block.baseFeePerGas ?? 0n
  const maxPriorityFeePerGas = (suggestedTip * TIP_PERCENT[speed]) / 100n
  return { maxPriorityFeePerGas, maxFeePerGas: baseFee * 2n + maxPriorityFeePerGas }
}

/** Gas limit from an estimate: contract calls get 30% headroom (pool oracle writes vary by block). */
export function gasLimitFor(estimate: bigint, hasCalldata: boolean): bigint {
  return hasCalldata ? (estimate * 13n + 9n) / 10n : estimate
}
