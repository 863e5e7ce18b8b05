// Found by review: a swap whose minAmountOut is 0 needs an operator
// (slippage_unprotected), but one with minAmountOut 1 wei and maxSlippageBps
// 10000 accepted any price just the same and was signed and sent with no
// operator, under a recipient allowlist: whoever moved the pool first took
// the wallet's tokens. The intent's declared tolerance is now bounded by the
// policy's maxSwapSlippageBps (default 300) when the bound is checked against
// the simulation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { erc20Abi, maxUint256, parseEther, type Address, type Hex } from 'viem'
import { swapRouter02Abi, type Action, type TxIntent } from '@countersign/shared'
import { deployUniswapFixture } from '../scripts/uniswap-fixture.mjs'
import { anvilAccounts, startAnvil, type Anvil } from './support/anvil.js'
import { clientsFor, erc20Balance, erc20Write } from './support/contracts.js'
import { BOB, intentFor } from './support/intents.js'
import { importKey, Stack } from './support/stack.js'

const owner = anvilAccounts[0]!
const liquidityProvider = anvilAccounts[1]! // the fixture's deployer: holds the rest of both supplies
const WALLET = owner.address as Address
let anvil: Anvil
let uni: Awaited<ReturnType<typeof deployUniswapFixture>>

beforeAll(async () => {
  anvil = await startAnvil({ chainId: 8453 })
  uni = await deployUniswapFixture({ rpcUrl: anvil.rpcUrl, chainId: 8453, deployerKey: liquidityProvider.privateKey, fundWallets: [WALLET] })
  // The wallet let the router spend its TUSD earlier, as for any v3 swap.
  await erc20Write({ rpcUrl: anvil.rpcUrl, chainId: 8453, fromKey: owner.privateKey as Hex, token: uni.tokenB as Address, functionName: 'approve', args: [uni.swapRouter02 as Address, maxUint256] })
}, 180_000)

afterAll(async () => {
  await anvil?.stop()
})

/** Sells 500 TUSD for TKA (about 250 TKA at the fixture's price). */
const swap = (minAmountOut: string, maxSlippageBps: number): TxIntent => {
  const action: Action = {
    type: 'swap_exact_in',
    router: uni.swapRouter02 as Address,
    assetIn: { kind: 'erc20', address: uni.tokenB as Address },
    assetOut: { kind: 'erc20', address: uni.tokenA as Address },
    amountIn: '500000000',
    minAmountOut,
  }
  return intentFor(WALLET, action, { maxGasWei: parseEther('0.05').toString(), maxSlippageBps })
}

describe('a swap whose bound accepts any price under a declared 100% tolerance', () => {
  it('is not signed without an operator, even after the pool was moved against it, and nothing leaves the wallet', async () => {
    // The operator's policy: value may leave only to BOB; the agent trades between the two listed tokens.
    const stack = new Stack({
      rpcUrls: { 8453: anvil.rpcUrl },
      policy: { maxTxPerHour: 1000, recipientAllowlist: [BOB], tokenAllowlist: [uni.tokenA, uni.tokenB] },
      env: { SERVICE_V3_ROUTER_8453: uni.swapRouter02 },
    })
    await importKey(stack.dataDir, owner.privateKey)
    await stack.start()
    try {
      const pf = await stack.post('/v1/tx/preflight', swap('1', 10_000))
      expect(pf.status).toBe(200)
      expect(pf.body.riskFactors).toContainEqual(
        expect.objectContaining({ id: 'slippage_unprotected', detail: expect.stringMatching(/^minAmountOut 1 is below \d+, the simulated output \d+ less the policy's maxSwapSlippageBps 300 \(the intent declares 10000\)/) }),
      )
      // Someone moves the pool first (the API caller chooses when the intent is sent).
      const { pub, wallet } = clientsFor(anvil.rpcUrl, 8453, liquidityProvider.privateKey as Hex)
      await pub.waitForTransactionReceipt({ hash: await wallet!.writeContract({ address: uni.tokenB as Address, abi: erc20Abi, functionName: 'approve', args: [uni.swapRouter02 as Address, maxUint256] }) })
      const push = await wallet!.writeContract({
        address: uni.swapRouter02 as Address,
        abi: swapRouter02Abi,
        functionName: 'exactInputSingle',
        gas: 1_000_000n,
        args: [{ tokenIn: uni.tokenB as Address, tokenOut: uni.tokenA as Address, fee: 3000, recipient: wallet!.account!.address, amountIn: 100_000_000n * 10n ** 6n, amountOutMinimum: 0n, sqrtPriceLimitX96: 0n }],
      })
      expect((await pub.waitForTransactionReceipt({ hash: push })).status).toBe('success')
      const before = await erc20Balance(anvil.rpcUrl, 8453, uni.tokenB as Address, WALLET)
      const sent = await stack.post('/v1/tx/sign-and-send', { intent: swap('1', 10_000) })
      expect(sent.status).toBe(403)
      expect(sent.body.error).toBe('approval_required')
      expect(await erc20Balance(anvil.rpcUrl, 8453, uni.tokenB as Address, WALLET)).toBe(before)
      // A bound within the ceiling of the price now on chain is no better: that price is the one the pool was
      // moved to, and with a recipient allowlist every swap is an operator's to judge (found by review: an
      // attacker-seeded pool of two listed tokens took 1,000 TUSD through a swap bound to its own price).
      const fair = await stack.post('/v1/tx/preflight', swap('1', 50))
      const out = BigInt(fair.body.balanceDiffs.find((d: { token: string }) => d.token.toLowerCase() === uni.tokenA.toLowerCase()).change)
      const tight = await stack.post('/v1/tx/sign-and-send', { intent: swap(((out * 9_950n) / 10_000n).toString(), 50) })
      expect(tight.status).toBe(403)
      expect(tight.body.error).toBe('approval_required')
      expect(tight.body.message).toMatch(/at its pool's price, which anyone can set for a pool with little liquidity and nothing here checks/)
      expect(await erc20Balance(anvil.rpcUrl, 8453, uni.tokenB as Address, WALLET)).toBe(before)
    } finally {
      await stack.stop()
    }
  }, 120_000)

  // Found by two reviews: a swap preflighted before the wallet let the router spend its tokens reverted; once
  // the allowance was mined, sign-and-send reused that reverted preflight (within 120 s), whose missing balance
  // changes left the 1-wei bound unchecked and whose score (50) is not above maxRiskScore: signed and broadcast.
  it('a swap preflighted while it reverted is simulated again at sign time, and its 1-wei bound needs an operator', async () => {
    const stack = new Stack({
      rpcUrls: { 8453: anvil.rpcUrl },
      policy: { maxTxPerHour: 1000, tokenAllowlist: [uni.tokenA, uni.tokenB] },
      env: { SERVICE_V3_ROUTER_8453: uni.swapRouter02 },
    })
    await importKey(stack.dataDir, owner.privateKey)
    await stack.start()
    const allowRouter = (amount: bigint) =>
      erc20Write({ rpcUrl: anvil.rpcUrl, chainId: 8453, fromKey: owner.privateKey as Hex, token: uni.tokenB as Address, functionName: 'approve', args: [uni.swapRouter02 as Address, amount] })
    try {
      await allowRouter(0n)
      const attack = swap('1', 50)
      const pf = await stack.post('/v1/tx/preflight', attack)
      expect(pf.status).toBe(200)
      expect(pf.body.simulationSuccess).toBe(false)
      expect(pf.body.riskFactors).toContainEqual(expect.objectContaining({ id: 'slippage_unprotected', detail: expect.stringMatching(/^the simulation did not succeed, so minAmountOut 1 could not be checked/) }))
      await allowRouter(maxUint256)
      const before = await erc20Balance(anvil.rpcUrl, 8453, uni.tokenB as Address, WALLET)
      const sent = await stack.post('/v1/tx/sign-and-send', { intent: attack })
      expect(sent.status, JSON.stringify(sent.body)).toBe(403)
      expect(sent.body.error).toBe('approval_required')
      expect(sent.body.message).toMatch(/minAmountOut 1 is below \d+, the simulated output/)
      expect(await erc20Balance(anvil.rpcUrl, 8453, uni.tokenB as Address, WALLET)).toBe(before)
    } finally {
      await allowRouter(maxUint256)
      await stack.stop()
    }
  }, 120_000)
})
