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
  const { baseFee, suggestedTip } = await readFeeData(client)
  const maxPriorityFeePerGas = (suggestedTip * TIP_PERCENT[speed]) / 100n
  return { maxPriorityFeePerGas, maxFeePerGas: baseFee * 2n + maxPriorityFeePerGas }
}

interface FeeData {
  baseFee: bigint
  suggestedTip: bigint
}

// Reads in flight, per client. Nothing is kept once a read settles.
const inFlight = new WeakMap<PublicClient, Promise<FeeData>>()

/**
 * The latest base fee and the node's suggested tip. Callers that ask while a
 * read is in flight share it: its answer is at most one round trip older than
 * one of their own would be (the max fee leaves room for six full blocks of
 * base-fee growth), and concurrent requests (preflights, sign-and-sends of
 * other wallets) cost one pair of node calls instead of one pair each.
 */
function readFeeData(client: PublicClient): Promise<FeeData> {
  const pending = inFlight.get(client)
  if (pending) return pending
  const read = Promise.all([client.getBlock({ blockTag: 'latest' }), client.estimateMaxPriorityFeePerGas().catch(() => 1_000_000_000n)])
    .then(([block, suggestedTip]) => ({ baseFee: block.baseFeePerGas ?? 0n, suggestedTip }))
    .finally(() => inFlight.delete(client))
  inFlight.set(client, read)
  return read
}

/** Gas limit from an estimate: contract calls get 30% headroom (pool oracle writes vary by block). */
export function gasLimitFor(estimate: bigint, hasCalldata: boolean): bigint {
  return hasCalldata ? (estimate * 13n + 9n) / 10n : estimate
}
