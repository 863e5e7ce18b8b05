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

  // What the aggregator alone chooses: where the router sends the sold tokens,
  // the flags, and the bytes around the encoding (review: a quote named its own
  // srcReceiver and kept the wallet's tokens while paying a tenth of the market).
  it.each<[string, Parameters<typeof swapCalldata>[0], RegExp]>([
    ['sold tokens sent elsewhere than the executor', { srcReceiver: '0x00000000000000000000000000000000000bad00' }, /the sold tokens go to 0x0+bad00, not to the executor/i],
    ['sold tokens burnt', { srcReceiver: '0x000000000000000000000000000000000000dead' }, /not to the executor/],
    ['partial fill', { flags: 1n }, /swap flags 1 are not allowed/],
    ['extra ETH', { flags: 2n }, /swap flags 2 are not allowed/],
    ['Permit2', { flags: 4n }, /swap flags 4 are not allowed/],
    ['an unknown flag bit', { flags: 1n << 255n }, /swap flags .* are not allowed/],
  ])('refuses %s', (_n, o, problem) => {
    const r = checkAggregatorTx(intent(), tx(swapCalldata(o)), routers)
    expect(r.ok).toBe(false)
    expect(!r.ok && r.problem).toMatch(problem)
  })

  it('accepts any executor whose tokens it trades, and executor data it cannot read', () => {
    const other = '0x1136B25047E142Fa3018184793aEc68fBB173cE4'
    expect(checkAggregatorTx(intent(), tx(swapCalldata({ executor: other, data: '0xdeadbeef' })), routers)).toEqual({ ok: true, minReturnAmount: 5n })
  })

  it('refuses calldata that is not exactly the ABI encoding: trailing bytes, a stray byte, dirty padding', () => {
    const good = swapCalldata()
    const problem = /in its one ABI encoding/
    const trailing = `${good}${'00'.repeat(32)}` as Hex
    expect(checkAggregatorTx(intent(), tx(trailing), routers)).toMatchObject({ ok: false, problem: expect.stringMatching(problem) })
    expect(checkAggregatorTx(intent(), tx(`${good}ff` as Hex), routers)).toMatchObject({ ok: false, problem: expect.stringMatching(problem) })
    // The executor word with bits above its 20 bytes: decoders read the low 20 bytes, a router might not.
    const dirty = `${good.slice(0, 10)}ff${good.slice(12)}` as Hex
    expect(good.slice(10, 34)).toBe('0'.repeat(24))
    expect(checkAggregatorTx(intent(), tx(dirty), routers)).toMatchObject({ ok: false, problem: expect.stringMatching(problem) })
  })

  it('refuses another router, native value, calldata that is not swap(), and non-aggregator intents', () => {
    expect(checkAggregatorTx(intent(), tx(swapCalldata(), '0x0000000000000000000000000000000000000bad'), routers)).toMatchObject({ ok: false })
    expect(checkAggregatorTx(intent(), tx(swapCalldata(), AGGREGATOR_ROUTER, '1'), routers)).toMatchObject({ ok: false })
    expect(checkAggregatorTx(intent(), tx('0x12345678'), routers)).toMatchObject({ ok: false })
    expect(checkAggregatorTx(makeIntent({ action: actions.swapIn() }), tx(swapCalldata()), routers)).toMatchObject({ ok: false })
  })

  // Review: the aggregator path never checked the intent itself (the signer and the approver call only buildAggregatorTransaction).
  it.each<[string, Record<string, unknown>, Parameters<typeof swapCalldata>[0], RegExp]>([
    ['a router that is no router (the card shows it as "Router")', { router: '0x000000000000000000000000000000000000dEaD' }, {}, /router 0x000000000000000000000000000000000000dEaD is not a router of chain 8453/],
    ['the v3 router: built on v3, never from a quote', { router: '0x2626664c2603336E57B271c5C0b26F421741e481' }, {}, /is not the aggregator router .*only an intent that names it is built from the aggregator's quote/],
    ['a token sold for itself', { assetOut: { kind: 'erc20', address: USDC_BASE } }, { dst: USDC_BASE }, /must be different tokens/],
    ['an amount of 0', { amountIn: '0' }, { amount: 0n }, /action.amountIn must be greater than 0/],
  ])('buildAggregatorTransaction refuses an intent with %s before reading the calldata', (_n, change, calldata, problem) => {
    const i = makeIntent({ action: { ...actions.swapIn(), provider: 'aggregator', router: AGGREGATOR_ROUTER, ...change } as never })
    expect(() => buildAggregatorTransaction(i, { to: AGGREGATOR_ROUTER, data: swapCalldata(calldata) }, routers)).toThrow(problem)
  })

  it('buildAggregatorTransaction binds the quote and says which path it took, or throws a BuildError', () => {
    const built = buildAggregatorTransaction(intent(), { to: AGGREGATOR_ROUTER, data: swapCalldata() }, routers)
    expect(built.txRequest.to).toBe(AGGREGATOR_ROUTER)
    expect(built.description).toContain('via the aggregator router')
    expect(() => buildAggregatorTransaction(intent(), { to: AGGREGATOR_ROUTER, data: swapCalldata({ minReturn: 0n }) }, routers)).toThrow(BuildError)
  })
})
