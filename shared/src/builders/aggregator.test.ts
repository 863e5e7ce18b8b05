import type { Hex } from 'viem'
import { aggregatorSwapCalldata as swapCalldata } from '../server/testing/aggregator.js'
import { describe, expect, it } from 'vitest'
import { actions, makeIntent, USDC_BASE, WETH_BASE } from '../server/testing/intents.js'
import type { TxIntent } from '../types.js'
import { checkAggregatorTx } from './aggregator.js'
import { buildAggregatorTransaction } from './buildTransaction.js'
import { BuildError } from './errors.js'
import { AGGREGATOR_ROUTER, defaultRouterTable } from './routers.js'

const routers = defaultRouterTable()
const intent = (): TxIntent => makeIntent({ action: { ...actions.swapIn(), provider: 'aggregator', router: AGGREGATOR_ROUTER } as never })

const tx = (data: Hex, to = AGGREGATOR_ROUTER, value = '0') => ({ to, data, value, chainId: 8453 })

describe('checkAggregatorTx', () => {
  it('accepts a swap that does what the intent says', () => {
    expect(checkAggregatorTx(intent(), tx(swapCalldata()), routers)).toEqual({ ok: true, minReturnAmount: 5n })
  })

  it.each<[string, Parameters<typeof swapCalldata>[0], RegExp]>([
    ['another receiver', { receiver: '0x000000000000000000000000000000000000dead' }, /proceeds go to/],
    ['another input token', { src: WETH_BASE }, /sells/],
    ['another output token', { dst: USDC_BASE }, /buys/],
    ['another amount', { amount: 999_999n }, /amount in/],
    ['a lower minimum out than the intent', { minReturn: 0n }, /minimum out 0 is below/],
  ])('refuses %s', (_n, o, problem) => {
    const r = checkAggregatorTx(intent(), tx(swapCalldata(o)), routers)
    expect(r.ok).toBe(false)
    expect(!r.ok && r.problem).toMatch(problem)
  })

  it('refuses another router, native value, calldata that is not swap(), and non-aggregator intents', () => {
    expect(checkAggregatorTx(intent(), tx(swapCalldata(), '0x0000000000000000000000000000000000000bad'), routers)).toMatchObject({ ok: false })
    expect(checkAggregatorTx(intent(), tx(swapCalldata(), AGGREGATOR_ROUTER, '1'), routers)).toMatchObject({ ok: false })
    expect(checkAggregatorTx(intent(), tx('0x12345678'), routers)).toMatchObject({ ok: false })
    expect(checkAggregatorTx(makeIntent({ action: actions.swapIn() }), tx(swapCalldata()), routers)).toMatchObject({ ok: false })
  })

  it('buildAggregatorTransaction binds the quote and says which path it took, or throws a BuildError', () => {
    const built = buildAggregatorTransaction(intent(), { to: AGGREGATOR_ROUTER, data: swapCalldata() }, routers)
    expect(built.txRequest.to).toBe(AGGREGATOR_ROUTER)
    expect(built.description).toContain('via the aggregator router')
    expect(() => buildAggregatorTransaction(intent(), { to: AGGREGATOR_ROUTER, data: swapCalldata({ minReturn: 0n }) }, routers)).toThrow(BuildError)
  })
})
