// Swaps on real Uniswap v3 contracts (deployed from their npm artifacts onto
// anvil): preflight predicts the balance changes, the mined swap matches them.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseEther, type Address } from 'viem'
import { buildTransaction, routerTableFromEnv, type Action, type Asset, type TxIntent } from '@countersign/shared'
import { deployUniswapFixture } from '../scripts/uniswap-fixture.mjs'
import { anvilAccounts, startAnvil, type Anvil } from './support/anvil.js'
import { clientsFor, erc20Balance } from './support/contracts.js'
import { waitFor } from './support/processes.js'
import { intentFor } from './support/intents.js'
import { importKey, Stack } from './support/stack.js'

const owner = anvilAccounts[0]
const WALLET = owner.address as Address
let anvil: Anvil
let stack: Stack
let uni: Awaited<ReturnType<typeof deployUniswapFixture>>
let tka: Asset
let tusd: Asset

const intent = (action: Action, deadlineOffset = 600): TxIntent =>
  intentFor(WALLET, action, { maxGasWei: parseEther('0.05').toString(), deadlineOffset, maxSlippageBps: 100 })

async function mined(hash: string) {
  return waitFor(async () => {
    const r = await stack.get(`/v1/tx/${hash}`)
    return r.status === 200 ? r.body : null
  })
}

const diffOf = (diffs: Array<{ token: string; change: string }>, token: string) => BigInt(diffs.find((d) => d.token.toLowerCase() === token.toLowerCase())?.change ?? '0')

beforeAll(async () => {
  anvil = await startAnvil({ chainId: 8453 })
  uni = await deployUniswapFixture({ rpcUrl: anvil.rpcUrl, chainId: 8453, deployerKey: anvilAccounts[1].privateKey, fundWallets: [WALLET] })
  tka = { kind: 'erc20', address: uni.tokenA as Address, symbol: 'TKA', decimals: 18 }
  tusd = { kind: 'erc20', address: uni.tokenB as Address, symbol: 'TUSD', decimals: 6 }
  stack = new Stack({ rpcUrls: { 8453: anvil.rpcUrl }, policy: { maxTxPerHour: 1000 }, env: { SERVICE_V3_ROUTER_8453: uni.swapRouter02 } })
  await importKey(stack.dataDir, owner.privateKey)
  await stack.start()
  // The wallet lets the router spend its TUSD, through the service itself.
  const approve = await stack.post('/v1/tx/sign-and-send', { intent: intent({ type: 'approve', asset: tusd, spender: uni.swapRouter02 as Address, amount: (10n ** 12n).toString() }) })
  expect(approve.status).toBe(200)
  await mined(approve.body.txHash)
}, 120_000)

afterAll(async () => {
  await stack?.stop()
  await anvil?.stop()
})

describe('swaps through SwapRouter02', () => {
  it('swap_exact_in: preflight predicts the diffs, the mined swap matches them', async () => {
    // Quote by simulation, then ask for at least the quote less the declared 1% (a looser minimum needs an operator).
    const probe = intent({ type: 'swap_exact_in', router: uni.swapRouter02 as Address, assetIn: tusd, assetOut: tka, amountIn: '20000000', minAmountOut: parseEther('9').toString() })
    const quoted = diffOf((await stack.post('/v1/tx/preflight', probe)).body.balanceDiffs, tka.address)
    const i = { ...probe, id: randomUUID(), action: { ...probe.action, minAmountOut: ((quoted * 99n) / 100n).toString() } } as TxIntent
    const pf = await stack.post('/v1/tx/preflight', i)
    expect(pf.status).toBe(200)
    expect(pf.body.simulationSuccess).toBe(true)
    expect(pf.body.riskFactors).toEqual([])
    const predictedIn = diffOf(pf.body.balanceDiffs, tusd.address)
    const predictedOut = diffOf(pf.body.balanceDiffs, tka.address)
    expect(predictedIn).toBe(-20_000_000n)
    expect(predictedOut).toBeGreaterThanOrEqual(parseEther('9'))

    const [a0, b0] = await Promise.all([erc20Balance(anvil.rpcUrl, 8453, tka.address, WALLET), erc20Balance(anvil.rpcUrl, 8453, tusd.address, WALLET)])
    const sent = await stack.post('/v1/tx/sign-and-send', { intent: i })
    expect(sent.status).toBe(200)
    expect((await mined(sent.body.txHash)).status).toBe('success')
    const [a1, b1] = await Promise.all([erc20Balance(anvil.rpcUrl, 8453, tka.address, WALLET), erc20Balance(anvil.rpcUrl, 8453, tusd.address, WALLET)])
    expect(b1 - b0).toBe(predictedIn)
    expect(a1 - a0).toBe(predictedOut)
    expect(a1 - a0).toBeGreaterThanOrEqual(BigInt((i.action as { minAmountOut: string }).minAmountOut))
  })

  it('swap_exact_out: exactly the amount out, at most the amount in, as predicted', async () => {
    // Quote by simulation, then pay at most the quote plus the declared 1% (a looser maximum needs an operator).
    const probe = intent({ type: 'swap_exact_out', router: uni.swapRouter02 as Address, assetIn: tusd, assetOut: tka, amountOut: parseEther('3').toString(), maxAmountIn: '7000000' })
    const quoted = -diffOf((await stack.post('/v1/tx/preflight', probe)).body.balanceDiffs, tusd.address)
    const i = { ...probe, id: randomUUID(), action: { ...probe.action, maxAmountIn: ((quoted * 101n) / 100n).toString() } } as TxIntent
    const pf = await stack.post('/v1/tx/preflight', i)
    expect(pf.body.simulationSuccess).toBe(true)
    expect(pf.body.riskFactors).toEqual([])
    const predictedIn = diffOf(pf.body.balanceDiffs, tusd.address)
    expect(diffOf(pf.body.balanceDiffs, tka.address)).toBe(parseEther('3'))
    expect(-predictedIn).toBeLessThanOrEqual(7_000_000n)

    const [a0, b0] = await Promise.all([erc20Balance(anvil.rpcUrl, 8453, tka.address, WALLET), erc20Balance(anvil.rpcUrl, 8453, tusd.address, WALLET)])
    const sent = await stack.post('/v1/tx/sign-and-send', { intent: i })
    expect(sent.status).toBe(200)
    expect((await mined(sent.body.txHash)).status).toBe('success')
    const [a1, b1] = await Promise.all([erc20Balance(anvil.rpcUrl, 8453, tka.address, WALLET), erc20Balance(anvil.rpcUrl, 8453, tusd.address, WALLET)])
    expect(a1 - a0).toBe(parseEther('3'))
    expect(b1 - b0).toBe(predictedIn)
  })

  it('a bound looser than the declared slippage (minAmountOut 0, or far below the quote) is not signed without an operator', async () => {
    // The review's swap: minAmountOut "0", maxSlippageBps 0 (only the declared figure was ever scored: risk 0, signed).
    const any = intentFor(WALLET, { type: 'swap_exact_in', router: uni.swapRouter02 as Address, assetIn: tusd, assetOut: tka, amountIn: '20000000', minAmountOut: '0' }, { maxGasWei: parseEther('0.05').toString(), maxSlippageBps: 0 })
    const pf = await stack.post('/v1/tx/preflight', any)
    expect(pf.body.riskFactors).toEqual([{ id: 'slippage_unprotected', weight: 20, detail: 'minAmountOut is 0: the swap accepts any price, whatever maxSlippageBps says' }])
    const before = await erc20Balance(anvil.rpcUrl, 8453, tusd.address, WALLET)
    const sent = await stack.post('/v1/tx/sign-and-send', { intent: any })
    expect(sent.status).toBe(403)
    expect(sent.body.error).toBe('approval_required')
    expect(sent.body.message).toContain('minAmountOut is 0')
    // 9 TKA for 20 TUSD declared with 1%: the quote is about 9.97 TKA, so 9 is ~10% below it.
    const loose = intent({ type: 'swap_exact_in', router: uni.swapRouter02 as Address, assetIn: tusd, assetOut: tka, amountIn: '20000000', minAmountOut: parseEther('9').toString() })
    const loosePf = await stack.post('/v1/tx/preflight', loose)
    expect(loosePf.body.riskFactors.map((f: { id: string }) => f.id)).toEqual(['slippage_unprotected'])
    expect(loosePf.body.riskFactors[0].detail).toMatch(/^minAmountOut 9000000000000000000 is below \d+, the simulated output \d+ less maxSlippageBps 100/)
    expect((await stack.post('/v1/tx/sign-and-send', { intent: loose })).body.error).toBe('approval_required')
    expect(await erc20Balance(anvil.rpcUrl, 8453, tusd.address, WALLET)).toBe(before)
  })

  it('a minAmountOut the pool cannot meet reverts in preflight with a clear reason and is scored', async () => {
    const i = intent({ type: 'swap_exact_in', router: uni.swapRouter02 as Address, assetIn: tusd, assetOut: tka, amountIn: '1000000', minAmountOut: parseEther('1000').toString() })
    const pf = await stack.post('/v1/tx/preflight', i)
    expect(pf.status).toBe(200)
    expect(pf.body.simulationSuccess).toBe(false)
    expect(pf.body.revertReason).toBe('Too little received')
    expect(pf.body.riskFactors.map((f: { id: string }) => f.id)).toContain('simulation_reverted')
    expect(pf.body.riskScore).toBeGreaterThanOrEqual(50)
  })

  it('an expired deadline is refused before signing, and the same calldata would revert on chain', async () => {
    const i = intent({ type: 'swap_exact_in', router: uni.swapRouter02 as Address, assetIn: tusd, assetOut: tka, amountIn: '1000000', minAmountOut: '1' }, -60)
    const refused = await stack.post('/v1/tx/sign-and-send', { intent: i })
    expect(refused.status).toBe(403)
    expect(refused.body.error).toBe('policy_denied')
    expect(refused.body.reasons.join(' ')).toMatch(/deadline .* has passed/)
    const { txRequest } = buildTransaction(i, routerTableFromEnv({ SERVICE_V3_ROUTER_8453: uni.swapRouter02 }))
    const { pub } = clientsFor(anvil.rpcUrl, 8453)
    await expect(pub.call({ account: WALLET, to: txRequest.to, data: txRequest.data })).rejects.toThrow(/Transaction too old/)
  })
})
