import { describe, expect, it } from 'vitest'
import { actions, makeIntent } from '../server/testing/intents.js'
import { createAjv } from '../validation.js'
import { txIntentSchema } from '../schemas/index.js'
import type { TxIntent } from '../types.js'
import { buildTransaction } from '../builders/buildTransaction.js'
import { isAggregatorIntent } from '../builders/aggregator.js'
import { defaultRouterTable } from '../builders/routers.js'
import { canonicalProvider, withCanonicalProvider } from './providers.js'

// One fixed time: the built calldata carries the deadline.
const NOW = Date.UTC(2026, 10, 23, 12, 0, 0)
const swapWith = (provider: string | undefined): TxIntent => {
  const intent = makeIntent({ action: actions.swapIn(), nowMs: NOW, id: '6f1c2b8e-3d4a-4f5b-9c6d-7e8f9a0b1c2d' })
  return { ...intent, action: { ...intent.action, ...(provider === undefined ? {} : { provider }) } } as TxIntent
}

describe('swap provider names', () => {
  it.each([
    ['uniswap_v3', 'v3_router'],
    ['1inch', 'aggregator'],
    ['v3_router', 'v3_router'],
    ['aggregator', 'aggregator'],
    [undefined, 'v3_router'],
  ] as const)('%s is %s', (name, canonical) => {
    expect(canonicalProvider(name)).toBe(canonical)
  })

  it('the intent schema accepts the aliases and nothing else', () => {
    const validate = createAjv().compile(txIntentSchema)
    for (const p of ['v3_router', 'aggregator', 'uniswap_v3', '1inch']) expect(validate(swapWith(p)), p).toBe(true)
    for (const p of ['uniswap', 'UNISWAP_V3', '0x', 'oneinch']) expect(validate(swapWith(p)), p).toBe(false)
  })

  it('withCanonicalProvider maps an alias and leaves everything else, and any intent without one, untouched', () => {
    const alias = swapWith('uniswap_v3')
    const mapped = withCanonicalProvider(alias)
    expect(mapped).toEqual({ ...alias, action: { ...alias.action, provider: 'v3_router' } })
    expect((alias.action as { provider: string }).provider).toBe('uniswap_v3')
    expect((withCanonicalProvider(swapWith('1inch')).action as { provider: string }).provider).toBe('aggregator')
    for (const same of [swapWith('v3_router'), swapWith(undefined), makeIntent({ action: actions.transfer(), nowMs: NOW })]) {
      expect(withCanonicalProvider(same)).toBe(same)
    }
  })

  it('the builders (which the signer runs too) read an alias as its canonical provider', () => {
    const routers = defaultRouterTable()
    const built = (p: string | undefined) => buildTransaction(swapWith(p), routers)
    expect(built('uniswap_v3').txRequest).toEqual(built('v3_router').txRequest)
    expect(built('uniswap_v3').txRequest).toEqual(built(undefined).txRequest)
    expect(isAggregatorIntent(swapWith('1inch'))).toBe(true)
    expect(isAggregatorIntent(swapWith('uniswap_v3'))).toBe(false)
  })
})
