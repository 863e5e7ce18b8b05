// Agent clients written independently for the same wire contract (an MCP
// server and a skill script) must work unchanged (DESIGN.md §6 "client
// compatibility"): their policy file says "version": "1", their swaps say
// provider "uniswap_v3", their receipt view reads transactionHash, and their
// balance call names no chain, here on a stack with two chains. The bodies
// below are written out as those clients send them, not built by our helpers.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseEther, type Address } from 'viem'
import { deployUniswapFixture } from '../scripts/uniswap-fixture.mjs'
import { anvilAccounts, startAnvil, type Anvil } from './support/anvil.js'
import { clientsFor, erc20Balance } from './support/contracts.js'
import { waitFor } from './support/processes.js'
import { importKey, Stack } from './support/stack.js'

const owner = anvilAccounts[0]
const WALLET = owner.address as Address
const BOB = '0x000000000000000000000000000000000000b0b0'
const NATIVE = '0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE'
let base: Anvil
let optimism: Anvil
let stack: Stack
let uni: Awaited<ReturnType<typeof deployUniswapFixture>>

const now = () => Math.floor(Date.now() / 1000)

async function mined(hash: string): Promise<Record<string, unknown>> {
  return waitFor(async () => {
    const r = await stack.get(`/v1/tx/${hash}`)
    return r.status === 200 ? r.body : null
  })
}

beforeAll(async () => {
  ;[base, optimism] = await Promise.all([startAnvil({ chainId: 8453 }), startAnvil({ chainId: 10 })])
  uni = await deployUniswapFixture({ rpcUrl: base.rpcUrl, chainId: 8453, deployerKey: anvilAccounts[1].privateKey, fundWallets: [WALLET] })
  stack = new Stack({
    rpcUrls: { 8453: base.rpcUrl, 10: optimism.rpcUrl },
    // The clients' policy file, version line included: the signer and the gateway both load it at start.
    policy: { version: '1', allowedChains: [8453, 10], maxTxPerHour: 1000 },
    env: { SERVICE_V3_ROUTER_8453: uni.swapRouter02 },
  })
  await importKey(stack.dataDir, owner.privateKey)
  await stack.start()
}, 180_000)

afterAll(async () => {
  await stack?.stop()
  await Promise.all([base?.stop(), optimism?.stop()])
})

describe('the bodies other clients send', () => {
  it('an ERC-20 transfer with wallet.profile and preferences is signed, mined, and its receipt carries the JSON-RPC names', async () => {
    const body = {
      intent: {
        version: '1',
        id: randomUUID(),
        timestamp: now(),
        chain: { type: 'evm', chainId: 8453 },
        wallet: { address: WALLET, profile: 'default' },
        action: { type: 'transfer', asset: { kind: 'erc20', address: uni.tokenB, symbol: 'TUSD', decimals: 6 }, to: BOB, amount: '1500000' },
        constraints: { maxGasWei: parseEther('0.01').toString(), deadline: now() + 600, maxSlippageBps: 50 },
        preferences: { speed: 'normal', privateRelay: false },
        metadata: { source: 'mcp-client', note: 'pay invoice 42' },
      },
    }
    const before = await erc20Balance(base.rpcUrl, 8453, uni.tokenB as Address, BOB as Address)
    const sent = await stack.post('/v1/tx/sign-and-send', body)
    expect(sent.status, JSON.stringify(sent.body)).toBe(200)
    const receipt = await mined(sent.body.txHash)
    expect(await erc20Balance(base.rpcUrl, 8453, uni.tokenB as Address, BOB as Address)).toBe(before + 1_500_000n)

    const chainReceipt = await clientsFor(base.rpcUrl, 8453).pub.getTransactionReceipt({ hash: sent.body.txHash })
    expect(receipt).toMatchObject({
      txHash: sent.body.txHash,
      transactionHash: sent.body.txHash,
      blockHash: chainReceipt.blockHash,
      contractAddress: null,
      status: 'success',
      chainId: 8453,
    })
  })

  it('a swap with provider "uniswap_v3" builds exactly the v3_router transaction, and is signed and mined', async () => {
    const intent = {
      version: '1',
      id: randomUUID(),
      timestamp: now(),
      chain: { type: 'evm', chainId: 8453 },
      wallet: { address: WALLET },
      action: {
        type: 'swap_exact_in',
        router: uni.swapRouter02,
        provider: 'uniswap_v3',
        assetIn: { kind: 'erc20', address: uni.tokenA, symbol: 'TKA', decimals: 18 },
        assetOut: { kind: 'erc20', address: uni.tokenB, symbol: 'TUSD', decimals: 6 },
        amountIn: parseEther('1').toString(),
        minAmountOut: '1',
      },
      constraints: { maxGasWei: parseEther('0.05').toString(), deadline: now() + 600, maxSlippageBps: 100 },
    }
    const alias = await stack.post('/v1/tx/build', intent)
    const canonical = await stack.post('/v1/tx/build', { ...intent, action: { ...intent.action, provider: 'v3_router' } })
    expect(alias.status, JSON.stringify(alias.body)).toBe(200)
    expect(alias.body.txRequestHash).toBe(canonical.body.txRequestHash)
    expect(alias.body.txRequest.to.toLowerCase()).toBe(uni.swapRouter02.toLowerCase())

    // The wallet lets the router spend its TKA, through the service itself.
    const allowance = {
      ...intent,
      id: randomUUID(),
      action: { type: 'approve', asset: intent.action.assetIn, spender: uni.swapRouter02, amount: parseEther('10').toString() },
    }
    const approved = await stack.post('/v1/tx/sign-and-send', { intent: allowance })
    expect(approved.status, JSON.stringify(approved.body)).toBe(200)
    expect((await mined(approved.body.txHash)).status).toBe('success')

    // Quote by simulation and ask for at least the quote less the declared 1 % (minAmountOut 1 would need an operator).
    const quote = await stack.post('/v1/tx/preflight', intent)
    const out = BigInt(quote.body.balanceDiffs.find((d: { token: string }) => d.token.toLowerCase() === uni.tokenB.toLowerCase()).change)
    const swap = { ...intent, id: randomUUID(), action: { ...intent.action, minAmountOut: ((out * 99n) / 100n).toString() } }
    const before = await erc20Balance(base.rpcUrl, 8453, uni.tokenB as Address, WALLET)
    const sent = await stack.post('/v1/tx/sign-and-send', { intent: swap })
    expect(sent.status, JSON.stringify(sent.body)).toBe(200)
    expect((await mined(sent.body.txHash)).status).toBe('success')
    expect(await erc20Balance(base.rpcUrl, 8453, uni.tokenB as Address, WALLET)).toBeGreaterThan(before)

  })

  it('a balance without chainId on a two-chain stack answers for 8453 and says so', async () => {
    // Make the two chains' balances differ, so the answer shows which chain was read.
    const { wallet } = clientsFor(optimism.rpcUrl, 10, anvilAccounts[2].privateKey)
    await clientsFor(optimism.rpcUrl, 10).pub.waitForTransactionReceipt({ hash: await wallet!.sendTransaction({ to: WALLET, value: parseEther('3') }) })
    const [onBase, onOptimism] = await Promise.all([
      clientsFor(base.rpcUrl, 8453).pub.getBalance({ address: WALLET }),
      clientsFor(optimism.rpcUrl, 10).pub.getBalance({ address: WALLET }),
    ])
    expect(onBase).not.toBe(onOptimism)

    const res = await stack.get(`/v1/balance/${NATIVE}/${WALLET}`)
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toEqual({ token: NATIVE, account: WALLET, balance: onBase.toString(), chainId: 8453 })
    const other = await stack.get(`/v1/balance/${NATIVE}/${WALLET}?chainId=10`)
    expect(other.body).toEqual({ token: NATIVE, account: WALLET, balance: onOptimism.toString(), chainId: 10 })
  })
})
