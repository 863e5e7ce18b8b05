// The shared Uniswap v3 fixture (scripts/uniswap-fixture.mjs) on a real anvil:
// a funded wallet approves SwapRouter02 itself and swaps with the calldata
// shape our builders produce, multicall(deadline, [exact*Single]) with
// recipient = the wallet and fee 3000.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { encodeFunctionData, erc20Abi, getAddress, parseUnits, type Abi, type Address, type Hex } from 'viem'
import type { Asset } from '@countersign/shared'
import { V3_FEE_TIER, v3SwapData } from '@countersign/shared'
import { deployUniswapFixture } from '../scripts/uniswap-fixture.mjs'
import { anvilAccounts, startAnvil, type Anvil } from './support/anvil.js'
import { clientsFor } from './support/contracts.js'

const require = createRequire(import.meta.url)
const router02Abi = (require('@uniswap/swap-router-contracts/artifacts/contracts/SwapRouter02.sol/SwapRouter02.json') as { abi: Abi }).abi
const quoterV2Abi = (require('@uniswap/swap-router-contracts/artifacts/contracts/lens/QuoterV2.sol/QuoterV2.json') as { abi: Abi }).abi

const deployer = anvilAccounts[0]
const trader = anvilAccounts[1]
const TRADER = trader.address as Address

let anvil: Anvil
let outDir: string
let outFile: string
let uni: Awaited<ReturnType<typeof deployUniswapFixture>>
let clients: ReturnType<typeof clientsFor>
let tka: Asset
let tusd: Asset

const balanceOf = (token: Address) => clients.pub.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [TRADER] })
const chainNow = async () => Number((await clients.pub.getBlock()).timestamp)

/** The swap as the trader sends it: estimate + 30% (the pool's oracle write), wait, expect success. */
async function send(data: Hex) {
  const wallet = clients.wallet!
  const gas = await clients.pub.estimateGas({ account: wallet.account, to: uni.swapRouter02 as Address, data })
  const hash = await wallet.sendTransaction({ to: uni.swapRouter02 as Address, data, gas: (gas * 13n) / 10n })
  return clients.pub.waitForTransactionReceipt({ hash })
}

/** multicall(deadline, [call]) encoded with the real SwapRouter02 ABI from its npm artifact. */
function multicall(deadline: number, call: Hex): Hex {
  return encodeFunctionData({ abi: router02Abi, functionName: 'multicall', args: [BigInt(deadline), [call]] })
}

beforeAll(async () => {
  anvil = await startAnvil({ chainId: 8453 })
  outDir = mkdtempSync(path.join(os.tmpdir(), 'cs-uni-'))
  outFile = path.join(outDir, 'nested', 'uniswap.json')
  uni = await deployUniswapFixture({ rpcUrl: anvil.rpcUrl, chainId: 8453, deployerKey: deployer.privateKey, fundWallets: [TRADER], outFile })
  clients = clientsFor(anvil.rpcUrl, 8453, trader.privateKey)
  tka = { kind: 'erc20', address: uni.tokenA as Address, symbol: 'TKA', decimals: 18 }
  tusd = { kind: 'erc20', address: uni.tokenB as Address, symbol: 'TUSD', decimals: 6 }
}, 60_000)

afterAll(async () => {
  await anvil?.stop()
  if (outDir) rmSync(outDir, { recursive: true, force: true })
})

describe('deployUniswapFixture', () => {
  it('returns checksummed addresses of deployed contracts, fee 3000 and the token decimals, and writes them to outFile', async () => {
    expect(uni.chainId).toBe(8453)
    expect(uni.fee).toBe(3000)
    expect(uni.fee).toBe(V3_FEE_TIER)
    expect(uni.tokenDecimals).toEqual({ tokenA: 18, tokenB: 6 })
    const names = ['weth', 'tokenA', 'tokenB', 'factory', 'positionManager', 'swapRouter02', 'quoterV2', 'pool'] as const
    for (const name of names) {
      const address = uni[name] as Address
      expect(getAddress(address), name).toBe(address)
      expect((await clients.pub.getCode({ address }))?.length ?? 0, `${name} has code`).toBeGreaterThan(2)
    }
    expect(JSON.parse(readFileSync(outFile, 'utf8'))).toEqual(uni)

    const read = (address: Address, functionName: 'symbol' | 'name' | 'decimals') => clients.pub.readContract({ address, abi: erc20Abi, functionName })
    expect([await read(tka.address, 'name'), await read(tka.address, 'symbol'), await read(tka.address, 'decimals')]).toEqual(['Token A', 'TKA', 18])
    expect([await read(tusd.address, 'name'), await read(tusd.address, 'symbol'), await read(tusd.address, 'decimals')]).toEqual(['Test USD', 'TUSD', 6])
  })

  it('funds the wallet with 1,000 of each token and leaves the router unapproved', async () => {
    expect(await balanceOf(tka.address)).toBe(parseUnits('1000', 18))
    expect(await balanceOf(tusd.address)).toBe(parseUnits('1000', 6))
    for (const token of [tka.address, tusd.address]) {
      const allowance = await clients.pub.readContract({ address: token, abi: erc20Abi, functionName: 'allowance', args: [TRADER, uni.swapRouter02 as Address] })
      expect(allowance).toBe(0n)
    }
  })
})

describe('swaps through SwapRouter02 on the fixture pool', () => {
  beforeAll(async () => {
    const hash = await clients.wallet!.writeContract({ address: tka.address, abi: erc20Abi, functionName: 'approve', args: [uni.swapRouter02 as Address, parseUnits('100', 18)] })
    expect((await clients.pub.waitForTransactionReceipt({ hash })).status).toBe('success')
  })

  it('exactInputSingle: spends exactly amountIn, receives the quoted amount, about 2 TUSD per TKA', async () => {
    const amountIn = parseUnits('5', 18)
    const params = { tokenIn: tka.address, tokenOut: tusd.address, fee: 3000, recipient: TRADER, amountIn, amountOutMinimum: 1n, sqrtPriceLimitX96: 0n }
    const deadline = (await chainNow()) + 600
    const data = multicall(deadline, encodeFunctionData({ abi: router02Abi, functionName: 'exactInputSingle', args: [params] }))
    // Byte for byte what our builder sends for the same intent.
    expect(data).toBe(v3SwapData({ type: 'swap_exact_in', router: uni.swapRouter02 as Address, assetIn: tka, assetOut: tusd, amountIn: amountIn.toString(), minAmountOut: '1' }, TRADER, deadline))

    const { result } = await clients.pub.simulateContract({
      address: uni.quoterV2 as Address,
      abi: quoterV2Abi,
      functionName: 'quoteExactInputSingle',
      args: [{ tokenIn: tka.address, tokenOut: tusd.address, amountIn, fee: 3000, sqrtPriceLimitX96: 0n }],
      account: TRADER,
    })
    const quoted = (result as readonly [bigint, ...unknown[]])[0]

    const [a0, b0] = [await balanceOf(tka.address), await balanceOf(tusd.address)]
    expect((await send(data)).status).toBe('success')
    const [a1, b1] = [await balanceOf(tka.address), await balanceOf(tusd.address)]
    expect(a0 - a1).toBe(amountIn)
    const received = b1 - b0
    expect(received).toBeGreaterThan(0n)
    expect(received).toBe(quoted)
    // 5 TKA ≈ 10 TUSD (10e6 units), less the 0.3% fee and a tiny price impact: within 2%.
    const ideal = parseUnits('10', 6)
    expect(received > ideal ? received - ideal : ideal - received).toBeLessThanOrEqual((ideal * 2n) / 100n)
  })

  it('exactOutputSingle: receives exactly amountOut for about half as many TKA', async () => {
    const amountOut = parseUnits('3', 6)
    const amountInMaximum = parseUnits('2', 18)
    const params = { tokenIn: tka.address, tokenOut: tusd.address, fee: 3000, recipient: TRADER, amountOut, amountInMaximum, sqrtPriceLimitX96: 0n }
    const deadline = (await chainNow()) + 600
    const data = multicall(deadline, encodeFunctionData({ abi: router02Abi, functionName: 'exactOutputSingle', args: [params] }))
    expect(data).toBe(v3SwapData({ type: 'swap_exact_out', router: uni.swapRouter02 as Address, assetIn: tka, assetOut: tusd, amountOut: amountOut.toString(), maxAmountIn: amountInMaximum.toString() }, TRADER, deadline))

    const [a0, b0] = [await balanceOf(tka.address), await balanceOf(tusd.address)]
    expect((await send(data)).status).toBe('success')
    const [a1, b1] = [await balanceOf(tka.address), await balanceOf(tusd.address)]
    expect(b1 - b0).toBe(amountOut)
    const spent = a0 - a1
    expect(spent).toBeGreaterThan(0n)
    expect(spent).toBeLessThanOrEqual(amountInMaximum)
    // 3 TUSD ≈ 1.5 TKA, plus the fee: within 2%.
    const ideal = parseUnits('1.5', 18)
    expect(spent > ideal ? spent - ideal : ideal - spent).toBeLessThanOrEqual((ideal * 2n) / 100n)
  })

  it('a multicall whose deadline has passed reverts with "Transaction too old"', async () => {
    const amountIn = parseUnits('1', 18)
    const params = { tokenIn: tka.address, tokenOut: tusd.address, fee: 3000, recipient: TRADER, amountIn, amountOutMinimum: 1n, sqrtPriceLimitX96: 0n }
    const data = multicall((await chainNow()) - 60, encodeFunctionData({ abi: router02Abi, functionName: 'exactInputSingle', args: [params] }))
    const before = await balanceOf(tka.address)
    await expect(clients.pub.call({ account: TRADER, to: uni.swapRouter02 as Address, data })).rejects.toThrow(/Transaction too old/)
    await expect(clients.pub.estimateGas({ account: TRADER, to: uni.swapRouter02 as Address, data })).rejects.toThrow(/Transaction too old/)
    expect(await balanceOf(tka.address)).toBe(before)
  })
})
