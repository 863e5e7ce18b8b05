import { decodeFunctionData } from 'viem'
import { describe, expect, it } from 'vitest'
import { actions, makeIntent, RECIPIENT, ROUTER_BASE, USDC_BASE, WALLET, WETH_BASE } from '../server/testing/intents.js'
import { swapRouter02Abi } from './abis.js'
import { buildTransaction, contractOf } from './buildTransaction.js'
import { BuildError } from './errors.js'
import { ConfigError } from '../config/configError.js'
import { AGGREGATOR_ROUTER, defaultRouterTable, routerTableFromEnv } from './routers.js'
import { V3_FEE_TIER } from './swap.js'

const routers = defaultRouterTable()

describe('buildTransaction', () => {
  it('ERC-20 transfer: calldata written out by hand', () => {
    const built = buildTransaction(makeIntent({ action: actions.transfer('5000000') }), routers)
    expect(built.txRequest).toEqual({
      to: USDC_BASE,
      value: '0',
      chainId: 8453,
      type: 'eip1559',
      data:
        '0xa9059cbb' +
        '0000000000000000000000002222222222222222222222222222222222222222' +
        '00000000000000000000000000000000000000000000000000000000004c4b40',
    })
    expect(built.description).toBe(`Transfer 5 USDC to ${RECIPIENT} on Base`)
  })

  it('ERC-20 approve', () => {
    const built = buildTransaction(makeIntent({ action: actions.approve('1000000') }), routers)
    expect(built.txRequest.to).toBe(USDC_BASE)
    expect(built.txRequest.data).toBe(
      '0x095ea7b3' + '0000000000000000000000002626664c2603336e57b271c5c0b26f421741e481' + '00000000000000000000000000000000000000000000000000000000000f4240',
    )
    expect(built.description).toContain('Approve 0x2626664c2603336E57B271c5C0b26F421741e481 to spend 1 USDC')
  })

  it('native transfer: value, no data', () => {
    const built = buildTransaction(makeIntent({ action: actions.native('1500000000000000000') }), routers)
    expect(built.txRequest).toEqual({ to: RECIPIENT, data: '0x', value: '1500000000000000000', chainId: 8453, type: 'eip1559' })
    expect(built.description).toBe(`Transfer 1.5 ETH (native) to ${RECIPIENT} on Base`)
  })

  it('swap_exact_in: multicall(deadline, [exactInputSingle]) on the chain router, recipient the wallet', () => {
    const intent = makeIntent({ action: actions.swapIn(), deadline: 1900000000 })
    const { txRequest } = buildTransaction(intent, routers)
    expect(txRequest.to).toBe(ROUTER_BASE)
    expect(txRequest.data.slice(0, 10)).toBe('0x5ae401dc')
    const outer = decodeFunctionData({ abi: swapRouter02Abi, data: txRequest.data })
    expect(outer.functionName).toBe('multicall')
    const [deadline, calls] = outer.args as [bigint, `0x${string}`[]]
    expect(deadline).toBe(1900000000n)
    expect(calls).toHaveLength(1)
    const inner = decodeFunctionData({ abi: swapRouter02Abi, data: calls[0]! })
    expect(inner.functionName).toBe('exactInputSingle')
    expect(inner.args[0]).toEqual({
      tokenIn: USDC_BASE,
      tokenOut: WETH_BASE,
      fee: V3_FEE_TIER,
      recipient: WALLET,
      amountIn: 1000000n,
      amountOutMinimum: 1n,
      sqrtPriceLimitX96: 0n,
    })
  })

  it('swap_exact_out: exactOutputSingle with the max amount in', () => {
    const { txRequest, description } = buildTransaction(makeIntent({ action: actions.swapOut() }), routers)
    const [, calls] = decodeFunctionData({ abi: swapRouter02Abi, data: txRequest.data }).args as [bigint, `0x${string}`[]]
    const inner = decodeFunctionData({ abi: swapRouter02Abi, data: calls[0]! })
    expect(inner.functionName).toBe('exactOutputSingle')
    expect(inner.args[0]).toMatchObject({ amountOut: 1000000000000n, amountInMaximum: 5000000n, recipient: WALLET })
    expect(description).toContain('for exactly 0.000001 WETH')
  })

  it('is deterministic', () => {
    const intent = makeIntent({ action: actions.swapIn() })
    expect(buildTransaction(intent, routers)).toEqual(buildTransaction(structuredClone(intent), routers))
  })

  it('refuses a router of another chain, naming it and the expected one', () => {
    const intent = makeIntent({ chainId: 10, action: actions.swapIn() })
    expect(() => buildTransaction(intent, routers)).toThrow(BuildError)
    expect(() => buildTransaction(intent, routers)).toThrow(/0x2626664c2603336E57B271c5C0b26F421741e481 is not the v3 router of chain 10; expected 0x68b3/)
    // Mainnet's router on Base is also wrong.
    const wrong = makeIntent({ action: { ...actions.swapIn(), router: '0x68b3465833fb72A70ecDF485E0e4C7bD8665Fc45' } as never })
    expect(() => buildTransaction(wrong, routers)).toThrow(BuildError)
  })

  it('aggregator provider: accepts the aggregator router and builds through the v3 path, saying so', () => {
    const intent = makeIntent({ action: { ...actions.swapIn(), provider: 'aggregator', router: AGGREGATOR_ROUTER } as never })
    const built = buildTransaction(intent, routers)
    expect(built.txRequest.to).toBe(ROUTER_BASE)
    expect(built.description).toContain('aggregator unavailable')
    expect(contractOf(intent, routers)).toBe(ROUTER_BASE)
  })

  it('the aggregator router is not accepted for v3_router or swap_exact_out', () => {
    expect(() => buildTransaction(makeIntent({ action: { ...actions.swapIn(), router: AGGREGATOR_ROUTER } as never }), routers)).toThrow(BuildError)
    expect(() => buildTransaction(makeIntent({ action: { ...actions.swapOut(), provider: 'aggregator', router: AGGREGATOR_ROUTER } as never }), routers)).toThrow(BuildError)
  })

  it('refuses amounts beyond uint256, zero swap amounts and a swap of a token for itself', () => {
    expect(() => buildTransaction(makeIntent({ action: actions.transfer('1' + '0'.repeat(78)) }), routers)).toThrow(/does not fit in uint256/)
    expect(() => buildTransaction(makeIntent({ action: { ...actions.swapIn(), amountIn: '0' } as never }), routers)).toThrow(/greater than 0/)
    const same = { ...actions.swapIn(), assetOut: { kind: 'erc20', address: USDC_BASE.toLowerCase() } } as never
    expect(() => buildTransaction(makeIntent({ action: same }), routers)).toThrow(/different tokens/)
    // 2^256 - 1 itself is fine.
    expect(() => buildTransaction(makeIntent({ action: actions.approve(((1n << 256n) - 1n).toString()) }), routers)).not.toThrow()
  })

  it('refuses a malformed amount or deadline with a BuildError, not a crash', () => {
    const bad = makeIntent({ action: actions.transfer('1e6') })
    expect(() => buildTransaction(bad, routers)).toThrow(BuildError)
    expect(() => buildTransaction(bad, routers)).toThrow(/action.amount must be a string of decimal digits/)
    const lateDeadline = makeIntent({ action: actions.swapIn(), deadline: 1.5 })
    expect(() => buildTransaction(lateDeadline, routers)).toThrow(expect.objectContaining({ code: 'invalid_deadline' }))
  })

  it.each([
    [1, '0x68b3465833fb72A70ecDF485E0e4C7bD8665Fc45', ROUTER_BASE],
    [10, '0x68b3465833fb72A70ecDF485E0e4C7bD8665Fc45', ROUTER_BASE],
    [42161, '0x68b3465833fb72A70ecDF485E0e4C7bD8665Fc45', ROUTER_BASE],
    [8453, ROUTER_BASE, '0x68b3465833fb72A70ecDF485E0e4C7bD8665Fc45'],
  ] as const)('chain %i: its own v3 router (any case) builds, another chain\'s is refused', (chainId, own, foreign) => {
    const ok = makeIntent({ chainId, action: { ...actions.swapIn(), router: own.toLowerCase() } as never })
    expect(buildTransaction(ok, routers).txRequest.to).toBe(own)
    const wrong = makeIntent({ chainId, action: { ...actions.swapIn(), router: foreign } as never })
    expect(() => buildTransaction(wrong, routers)).toThrow(expect.objectContaining({ code: 'router_not_for_chain' }))
    expect(() => buildTransaction(wrong, routers)).toThrow(`router ${foreign} is not the v3 router of chain ${chainId}; expected ${own}`)
  })

  it('leaves out a declared symbol that is not a plain ticker', () => {
    const asset = { kind: 'erc20', address: USDC_BASE, decimals: 6 } as const
    const described = (symbol: string) =>
      buildTransaction(makeIntent({ action: { type: 'transfer', asset: { ...asset, symbol }, to: RECIPIENT, amount: '5000000' } }), routers).description
    expect(described('USDC.e')).toBe(`Transfer 5 USDC.e to ${RECIPIENT} on Base`)
    // Only ASCII tickers: a letter or sign of another script can pass for a Latin one (a Cyrillic Е in "WЕTH",
    // the ₮ of "USD₮0" for a T), so such a symbol is left out and the address speaks (found by review).
    expect(described('USD₮0')).toBe(`Transfer 5 of token ${USDC_BASE} to ${RECIPIENT} on Base`)
    expect(described('W\u0415TH')).toBe(`Transfer 5 of token ${USDC_BASE} to ${RECIPIENT} on Base`)
    expect(described('U\u0405DC')).toBe(`Transfer 5 of token ${USDC_BASE} to ${RECIPIENT} on Base`)
    expect(described('USDC to 0x9999')).toBe(`Transfer 5 of token ${USDC_BASE} to ${RECIPIENT} on Base`)
    expect(described('0x9999')).toBe(`Transfer 5 of token ${USDC_BASE} to ${RECIPIENT} on Base`)
    expect(described('USDC\n')).toBe(`Transfer 5 of token ${USDC_BASE} to ${RECIPIENT} on Base`)
  })

  it('describes amounts without declared decimals as raw units', () => {
    const action = { type: 'transfer', asset: { kind: 'erc20', address: USDC_BASE }, to: RECIPIENT, amount: '42' } as const
    expect(buildTransaction(makeIntent({ action }), routers).description).toBe(`Transfer 42 units of token ${USDC_BASE} to ${RECIPIENT} on Base`)
  })
})

describe('router table', () => {
  it('has the real routers by default', () => {
    expect(routers.v3).toEqual({
      1: '0x68b3465833fb72A70ecDF485E0e4C7bD8665Fc45',
      10: '0x68b3465833fb72A70ecDF485E0e4C7bD8665Fc45',
      42161: '0x68b3465833fb72A70ecDF485E0e4C7bD8665Fc45',
      8453: '0x2626664c2603336E57B271c5C0b26F421741e481',
    })
    expect(routers.aggregator).toBe('0x111111125421cA6dc452d289314280a0f8842A65')
  })

  it('takes SERVICE_V3_ROUTER_{chainId} overrides and names a malformed one', () => {
    const local = '0x5FbDB2315678afecb367f032d93F642f64180aa3'
    const t = routerTableFromEnv({ SERVICE_V3_ROUTER_8453: local })
    expect(t.v3[8453]).toBe(local)
    expect(t.v3[1]).toBe('0x68b3465833fb72A70ecDF485E0e4C7bD8665Fc45')
    const intent = makeIntent({ action: { ...actions.swapIn(), router: local } as never })
    expect(buildTransaction(intent, t).txRequest.to).toBe(local)
    expect(() => routerTableFromEnv({ SERVICE_V3_ROUTER_10: 'nope' })).toThrow(ConfigError)
    expect(() => routerTableFromEnv({ SERVICE_V3_ROUTER_10: 'nope' })).toThrow(/SERVICE_V3_ROUTER_10/)
  })
})

describe('contractOf', () => {
  it('is the token, the router, or null for native', () => {
    expect(contractOf(makeIntent({ action: actions.transfer() }), routers)).toBe(USDC_BASE)
    expect(contractOf(makeIntent({ action: actions.approve() }), routers)).toBe(USDC_BASE)
    expect(contractOf(makeIntent({ action: actions.native() }), routers)).toBeNull()
    expect(contractOf(makeIntent({ action: actions.swapOut() }), routers)).toBe(ROUTER_BASE)
  })
})
