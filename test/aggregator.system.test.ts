// Aggregator swaps through the real gateway, approver-less token path and
// signer, against a local server speaking the aggregator's API format. The
// gateway prices the same swap on Uniswap v3 (the fixture's pool) to check
// the quote's minimum against; test/aggregatorPrice.system.test.ts runs
// quotes through a router with the aggregator's on-chain semantics.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseEther, parseTransaction, type Address } from 'viem'
import { AGGREGATOR_ROUTER, type Action, type TxIntent } from '@countersign/shared'
import { deployUniswapFixture } from '../scripts/uniswap-fixture.mjs'
import { anvilAccounts, startAnvil, type Anvil } from './support/anvil.js'
import { startFakeAggregator, type FakeAggregator } from './support/fakeAggregator.js'
import { intentFor } from './support/intents.js'
import { importKey, Stack } from './support/stack.js'

const owner = anvilAccounts[0]
const WALLET = owner.address as Address
const BASE_V3 = '0x2626664c2603336E57B271c5C0b26F421741e481'
const KEY = 'test-aggregator-key'
let TOKEN_IN: Address
let TOKEN_OUT: Address
let V3: Address

let anvil: Anvil
let fake: FakeAggregator
let stack: Stack

function swap(deadlineOffset = 600): TxIntent {
  const action: Action = {
    type: 'swap_exact_in',
    provider: 'aggregator',
    router: AGGREGATOR_ROUTER,
    assetIn: { kind: 'erc20', address: TOKEN_IN, symbol: 'TUSD', decimals: 6 },
    assetOut: { kind: 'erc20', address: TOKEN_OUT, symbol: 'TKA', decimals: 18 },
    amountIn: '1000000',
    minAmountOut: '1000000000000',
  }
  return intentFor(WALLET, action, { maxSlippageBps: 50, deadlineOffset })
}

beforeAll(async () => {
  anvil = await startAnvil({ chainId: 8453 })
  const uni = await deployUniswapFixture({ rpcUrl: anvil.rpcUrl, chainId: 8453, deployerKey: anvilAccounts[1].privateKey, fundWallets: [WALLET] })
  TOKEN_IN = uni.tokenB as Address
  TOKEN_OUT = uni.tokenA as Address
  V3 = uni.swapRouter02 as Address
  fake = await startFakeAggregator(KEY)
  // 1 TUSD buys about 0.5 TKA on the fixture's pool: quotes guaranteeing 0.6 beat it.
  fake.minReturn = parseEther('0.6')
  stack = new Stack({
    rpcUrls: { 8453: anvil.rpcUrl },
    // Swaps of TOKEN_IN need approval, so the token path is exercised.
    policy: { maxTxPerHour: 1000, tokenLimits: { [TOKEN_IN]: { requireApprovalAbove: '0' } } },
    env: { AGGREGATOR_API_KEY: KEY, SERVICE_AGGREGATOR_URL: fake.url, SERVICE_V3_ROUTER_8453: V3 },
  })
  await importKey(stack.dataDir, owner.privateKey)
  await stack.start()
}, 120_000)
afterAll(async () => {
  await stack?.stop()
  await fake?.close()
  await anvil?.stop()
})

describe('provider: aggregator', () => {
  it('builds from the quote, asks in the API’s format, and keeps the first quote for the intent', async () => {
    fake.mode = 'ok'
    fake.requests.length = 0
    const i = swap()
    const first = await stack.post('/v1/tx/build', i)
    expect(first.status).toBe(200)
    expect(first.body.txRequest.to).toBe(AGGREGATOR_ROUTER)
    expect(first.body.description).toMatch(/via the aggregator router, calldata from its quote\); the aggregator guarantees at least 0\.6000+1 TKA, the Uniswap v3 route would give 0\.4\d+ TKA$/)
    expect(fake.requests).toHaveLength(1)
    expect(fake.requests[0]).toMatchObject({
      path: '/8453/swap',
      authorization: `Bearer ${KEY}`,
      query: { src: TOKEN_IN, dst: TOKEN_OUT, amount: '1000000', from: WALLET, receiver: WALLET, slippage: '0.5' },
    })
    const second = await stack.post('/v1/tx/build', i)
    expect(second.body.txRequestHash).toBe(first.body.txRequestHash)
    expect(fake.requests).toHaveLength(1)
  })

  it('the approved transaction is the one signed: token from the build, signature checked by the signer, mined', async () => {
    fake.mode = 'ok'
    const i = swap()
    const refused = await stack.post('/v1/tx/sign-and-send', { intent: i })
    expect(refused.body.error).toBe('approval_required')
    const token = await stack.grant(i)
    const sent = await stack.post('/v1/tx/sign-and-send', { intent: i, approvalTokenId: token })
    expect(sent.status).toBe(200)
    expect(parseTransaction(sent.body.signedTx).to?.toLowerCase()).toBe(AGGREGATOR_ROUTER.toLowerCase())
  })

  it.each([
    ['wrong_receiver', /proceeds go to 0x000000000000000000000000000000000000dEaD|proceeds go to/],
    ['low_minimum', /minimum out 0 is below/],
    ['wrong_router', /not the aggregator router/],
    ['rate_limited', /rate limit \(429\)/],
    ['garbage', /no usable tx/],
  ] as const)('%s: falls back to the v3 router and says why', async (mode, why) => {
    fake.mode = mode
    const r = await stack.post('/v1/tx/build', swap())
    expect(r.status).toBe(200)
    expect(r.body.txRequest.to).toBe(V3)
    expect(r.body.description).toMatch(/via Uniswap v3 router; aggregator unavailable: /)
    expect(r.body.description).toMatch(why)
  })

  it('a quote below the v3 route’s output less slippage falls back, naming both figures', async () => {
    fake.mode = 'ok'
    fake.minReturn = parseEther('0.3')
    try {
      const r = await stack.post('/v1/tx/build', swap())
      expect(r.body.txRequest.to).toBe(V3)
      expect(r.body.description).toMatch(/aggregator unavailable: its guaranteed minimum of 3000000000000\d{5} base units of 0x[0-9a-fA-F]{40} is below the \d+ that the Uniswap v3 route's \d+ less the intent's 50 bps slippage gives/)
    } finally {
      fake.minReturn = parseEther('0.6')
    }
  })

  it('an unreachable aggregator falls back too', async () => {
    const down = new Stack({ rpcUrls: { 8453: anvil.rpcUrl }, env: { AGGREGATOR_API_KEY: KEY, SERVICE_AGGREGATOR_URL: 'http://127.0.0.1:9' } })
    await down.start()
    try {
      const r = await down.post('/v1/tx/build', swap())
      expect(r.body.txRequest.to).toBe(BASE_V3)
      expect(r.body.description).toContain('aggregator unreachable')
    } finally {
      await down.stop()
    }
  })

  it('an intent whose deadline is more than 30 minutes away is built on v3 (the aggregator’s swap has no deadline on chain), without asking the aggregator', async () => {
    fake.mode = 'ok'
    fake.requests.length = 0
    const r = await stack.post('/v1/tx/build', swap(3600))
    expect(r.status).toBe(200)
    expect(r.body.txRequest.to).toBe(V3)
    expect(r.body.description).toMatch(/aggregator unavailable: the intent's deadline is 3\d{3} s away, more than the 1800 s an aggregator quote is used for/)
    expect(fake.requests).toHaveLength(0)
  })

  it('an intent that names the v3 router is built on v3 without asking the aggregator (the card shows the intent’s router)', async () => {
    fake.mode = 'ok'
    fake.requests.length = 0
    const i = swap()
    ;(i.action as { router: string }).router = V3
    const r = await stack.post('/v1/tx/build', i)
    expect(r.status).toBe(200)
    expect(r.body.txRequest.to).toBe(V3)
    expect(r.body.description).toMatch(/aggregator unavailable: router 0x[0-9a-fA-F]{40} is not the aggregator router/)
    expect(fake.requests).toHaveLength(0)
  })

  it('a router that belongs to no chain is a 400 before the aggregator is called', async () => {
    fake.requests.length = 0
    const i = swap()
    ;(i.action as { router: string }).router = '0x68b3465833fb72A70ecDF485E0e4C7bD8665Fc45'
    const r = await stack.post('/v1/tx/build', i)
    expect(r.status).toBe(400)
    expect(fake.requests).toHaveLength(0)
  })
})
