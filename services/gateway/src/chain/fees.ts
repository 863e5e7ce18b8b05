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
export async function estimateFees(client: PublicClient, speed: Speed = 'normal', now: () => number = Date.now): Promise<Fees> {
  const { baseFee, suggestedTip } = await readFeeData(client, now)
  const maxPriorityFeePerGas = (suggestedTip * TIP_PERCENT[speed]) / 100n
  return { maxPriorityFeePerGas, maxFeePerGas: baseFee * 2n + maxPriorityFeePerGas }
}

interface FeeData {
  baseFee: bigint
  suggestedTip: bigint
}

/**
 * How long a fee read is reused. A sign-and-send that follows its
 * approve-request (whose preflight read the fees) a few milliseconds later
 * takes that read instead of a block and a tip of its own. Within a second
 * the base fee moves by at most one block (12.5 % on Ethereum), and the max
 * fee leaves room for six.
 */
export const FEE_REUSE_MS = 1000

// Per client: the read in flight, and the last one that succeeded (with the time it started).
const inFlight = new WeakMap<PublicClient, Promise<FeeData>>()
const lastRead = new WeakMap<PublicClient, { startedAt: number; data: FeeData }>()

/**
 * The latest base fee and the node's suggested tip. Callers that ask while a
 * read is in flight share it: its answer is at most one round trip older than
 * one of their own would be, and concurrent requests (preflights,
 * sign-and-sends of other wallets) cost one pair of node calls instead of one
 * pair each. A read that started less than FEE_REUSE_MS ago is reused.
 */
function readFeeData(client: PublicClient, now: () => number): Promise<FeeData> {
  const pending = inFlight.get(client)
  if (pending) return pending
  const startedAt = now()
  const last = lastRead.get(client)
  if (last && startedAt - last.startedAt < FEE_REUSE_MS && startedAt >= last.startedAt) return Promise.resolve(last.data)
  const read = Promise.all([client.getBlock({ blockTag: 'latest' }), client.estimateMaxPriorityFeePerGas().catch(() => 1_000_000_000n)])
    .then(([block, suggestedTip]) => {
      const data = { baseFee: block.baseFeePerGas ?? 0n, suggestedTip }
      lastRead.set(client, { startedAt, data })
      return data
    })
    .finally(() => inFlight.delete(client))
  inFlight.set(client, read)
  return read
}

/** Gas limit from an estimate: contract calls get 30% headroom (pool oracle writes vary by block). */
export function gasLimitFor(estimate: bigint, hasCalldata: boolean): bigint {
  return hasCalldata ? (estimate * 13n + 9n) / 10n : estimate
}
