// The aggregator's minimum against the v3 route's output (review: an
// aggregator paying a tenth of the market was signed at risk 0).
import { actions, makeIntent } from '@countersign/shared/testing/intents'
import { AGGREGATOR_ROUTER, type SwapExactInAction, type TxIntent } from '@countersign/shared'
import { describe, expect, it } from 'vitest'
import { AggregatorRefused, assertAggregatorDeadline, assertAggregatorPrice, MAX_AGGREGATOR_DEADLINE_SECONDS, minimumAgainstV3 } from './priceGuard.js'

const intent = (maxSlippageBps: number) => {
  const i = makeIntent({ action: { ...actions.swapIn(), provider: 'aggregator', router: AGGREGATOR_ROUTER } as never }) as TxIntent & { action: SwapExactInAction }
  return { ...i, constraints: { ...i.constraints, maxSlippageBps } }
}

describe('minimumAgainstV3', () => {
  it('is the v3 output less the intent’s slippage, rounded down, and 0 at 100%', () => {
    expect(minimumAgainstV3(10_000n, 50)).toBe(9_950n)
    expect(minimumAgainstV3(999n, 50)).toBe(994n)
    expect(minimumAgainstV3(10_000n, 0)).toBe(10_000n)
    expect(minimumAgainstV3(10_000n, 10_000)).toBe(0n)
  })
})

describe('assertAggregatorPrice', () => {
  it('admits a minimum at or above the floor and gives back the v3 figure', () => {
    expect(assertAggregatorPrice(intent(50), 9_950n, { ok: true, amountOut: 10_000n }, 300)).toBe(10_000n)
    expect(assertAggregatorPrice(intent(50), 12_000n, { ok: true, amountOut: 10_000n }, 300)).toBe(10_000n)
  })

  it('refuses a minimum below it, naming both figures in base units', () => {
    const refused = () => assertAggregatorPrice(intent(50), 9_949n, { ok: true, amountOut: 10_000n }, 300)
    expect(refused).toThrow(AggregatorRefused)
    expect(refused).toThrow(/its guaranteed minimum of 9949 base units of 0x[0-9a-fA-F]{40} is below the 9950 that the Uniswap v3 route's 10000 less the intent's 50 bps slippage gives/)
  })

  // Found by review: with the intent's figure alone, maxSlippageBps 10000 made the floor 0, and an
  // aggregator paying a tenth of the v3 market was signed with no operator.
  it('takes the policy’s maxSwapSlippageBps when the intent declares more, and says so', () => {
    expect(assertAggregatorPrice(intent(10_000), 9_700n, { ok: true, amountOut: 10_000n }, 300)).toBe(10_000n)
    const tenth = () => assertAggregatorPrice(intent(10_000), 1_000n, { ok: true, amountOut: 10_000n }, 300)
    expect(tenth).toThrow(AggregatorRefused)
    expect(tenth).toThrow(/below the 9700 that the Uniswap v3 route's 10000 less the policy's maxSwapSlippageBps of 300 \(the intent declares 10000\) gives/)
    expect(() => assertAggregatorPrice(intent(100), 9_899n, { ok: true, amountOut: 10_000n }, 300)).toThrow(/less the intent's 100 bps slippage/)
  })

  it('refuses when v3 could not be priced: nothing else bounds the aggregator’s price', () => {
    expect(() => assertAggregatorPrice(intent(50), 10n ** 30n, { ok: false, problem: 'no RPC endpoint is configured for chain 8453' }, 300)).toThrow(
      "the Uniswap v3 route could not be priced to check the aggregator's minimum against (no RPC endpoint is configured for chain 8453)",
    )
  })
})

describe('assertAggregatorDeadline', () => {
  it('admits a deadline up to 30 minutes ahead and refuses one further, saying the aggregator has no deadline on chain', () => {
    const nowMs = 1_800_000_000_000
    const due = (ahead: number) => ({ ...intent(50), constraints: { ...intent(50).constraints, deadline: nowMs / 1000 + ahead } })
    expect(() => assertAggregatorDeadline(due(600), nowMs)).not.toThrow()
    expect(() => assertAggregatorDeadline(due(MAX_AGGREGATOR_DEADLINE_SECONDS), nowMs)).not.toThrow()
    expect(() => assertAggregatorDeadline(due(MAX_AGGREGATOR_DEADLINE_SECONDS + 1), nowMs)).toThrow(AggregatorRefused)
    expect(() => assertAggregatorDeadline(due(7 * 86_400), nowMs)).toThrow(
      "the intent's deadline is 604800 s away, more than the 1800 s an aggregator quote is used for: the aggregator's swap carries no deadline on chain, the v3 route does",
    )
  })
})
