// A hostile token whose symbol() says "WETH", in a 0.3% pool the attacker
// seeded (the two attacks of the swap review): the approval
// card names both swap tokens by address and the preflight scores the
// lookalike symbol, which needs an operator; the fixture's own WETH (the
// WETH9 of the configured router) is not flagged on the dev chain.
import { randomUUID } from 'node:crypto'
import { createRequire } from 'node:module'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { erc20Abi, maxUint256, parseEther, parseUnits, type Address, type Hex } from 'viem'
import type { Asset, TxIntent } from '@countersign/shared'
import { deployUniswapFixture } from '../scripts/uniswap-fixture.mjs'
import { anvilAccounts, startAnvil, type Anvil } from './support/anvil.js'
import { clientsFor, deployTestToken, erc20Balance, withGasHeadroom } from './support/contracts.js'
import { waitFor } from './support/processes.js'
import { BOB, intentFor } from './support/intents.js'
import { importKey, Stack } from './support/stack.js'

const require = createRequire(import.meta.url)
const NPM = require('@uniswap/v3-periphery/artifacts/contracts/NonfungiblePositionManager.sol/NonfungiblePositionManager.json')
const Factory = require('@uniswap/v3-core/artifacts/contracts/UniswapV3Factory.sol/UniswapV3Factory.json')

const owner = anvilAccounts[0]
const attacker = anvilAccounts[1] // the fixture's deployer: holds TUSD
const WALLET = owner.address as Address
let anvil: Anvil
let uni: Awaited<ReturnType<typeof deployUniswapFixture>>
let tusd: Asset
let fakeWeth: Asset
let attackerPool: Address

function isqrt(n: bigint): bigint {
  if (n < 2n) return n
  let x = n
  let y = (x + 1n) >> 1n
  while (y < x) {
    x = y
    y = (x + n / x) >> 1n
  }
  return x
}

async function write(key: Hex, address: Address, abi: any, functionName: string, args: unknown[]) {
  const { pub, wallet } = clientsFor(anvil.rpcUrl, 8453, key)
  const gas = withGasHeadroom(await pub.estimateContractGas({ address, abi, functionName, args, account: wallet!.account } as any))
  const hash = await wallet!.writeContract({ address, abi, functionName, args, gas } as any)
  const r = await pub.waitForTransactionReceipt({ hash, pollingInterval: 50 })
  if (r.status !== 'success') throw new Error(`${functionName} reverted`)
}

const swapIntent = (amountIn: string, minAmountOut: string, maxSlippageBps: number): TxIntent =>
  intentFor(
    WALLET,
    { type: 'swap_exact_in', router: uni.swapRouter02 as Address, assetIn: tusd, assetOut: fakeWeth, amountIn, minAmountOut },
    { maxGasWei: parseEther('0.05').toString(), maxSlippageBps },
  )

const diffOf = (diffs: Array<{ token: string; change: string }>, token: string) => BigInt(diffs.find((d) => d.token.toLowerCase() === token.toLowerCase())?.change ?? '0')

beforeAll(async () => {
  anvil = await startAnvil({ chainId: 8453 })
  uni = await deployUniswapFixture({ rpcUrl: anvil.rpcUrl, chainId: 8453, deployerKey: attacker.privateKey, fundWallets: [WALLET], fundAmount: 100_000n })
  tusd = { kind: 'erc20', address: uni.tokenB as Address, symbol: 'TUSD', decimals: 6 }
  // The attacker's token: symbol() "WETH", name "Wrapped Ether", 18 decimals: the chain's own facts lie.
  const fake = await deployTestToken({ rpcUrl: anvil.rpcUrl, chainId: 8453, deployerKey: attacker.privateKey as Hex, name: 'Wrapped Ether', symbol: 'WETH', decimals: 18, supply: parseEther('1000') })
  fakeWeth = { kind: 'erc20', address: fake, symbol: 'WETH', decimals: 18 }
  // The attacker's TUSD/"WETH" pool at the 0.3% tier the builder always uses: 1 "WETH" = 3000 TUSD.
  const [t0, t1] = BigInt(fake) < BigInt(uni.tokenB) ? [fake, uni.tokenB as Address] : [uni.tokenB as Address, fake]
  const raw: Record<string, bigint> = { [fake.toLowerCase()]: 10n ** 18n, [uni.tokenB.toLowerCase()]: 3000n * 10n ** 6n }
  const sqrtPriceX96 = isqrt((raw[t1.toLowerCase()]! << 192n) / raw[t0.toLowerCase()]!)
  await write(attacker.privateKey as Hex, uni.positionManager as Address, NPM.abi, 'createAndInitializePoolIfNecessary', [t0, t1, 3000, sqrtPriceX96])
  await write(attacker.privateKey as Hex, fake, erc20Abi, 'approve', [uni.positionManager, maxUint256])
  const amt: Record<string, bigint> = { [fake.toLowerCase()]: parseEther('10'), [uni.tokenB.toLowerCase()]: 30_000n * 10n ** 6n }
  await write(attacker.privateKey as Hex, uni.positionManager as Address, NPM.abi, 'mint', [
    { token0: t0, token1: t1, fee: 3000, tickLower: -887220, tickUpper: 887220, amount0Desired: amt[t0.toLowerCase()], amount1Desired: amt[t1.toLowerCase()], amount0Min: 0n, amount1Min: 0n, recipient: attacker.address, deadline: BigInt(Math.floor(Date.now() / 1000) + 3600) },
  ])
  const { pub } = clientsFor(anvil.rpcUrl, 8453)
  attackerPool = (await pub.readContract({ address: uni.factory as Address, abi: Factory.abi, functionName: 'getPool', args: [t0, t1, 3000] })) as Address
  // The wallet already lets the router spend its TUSD (as for any v3 swap).
  await write(owner.privateKey as Hex, uni.tokenB as Address, erc20Abi, 'approve', [uni.swapRouter02, 10n ** 12n])
}, 180_000)

afterAll(async () => {
  await anvil?.stop()
})

describe('a swap into a token whose chain symbol lies', () => {
  it('the approval card names both tokens by address and carries the lookalike factor', async () => {
    const stack = new Stack({
      rpcUrls: { 8453: anvil.rpcUrl },
      policy: { maxTxPerHour: 1000, tokenLimits: { [uni.tokenB.toLowerCase()]: { requireApprovalAbove: '0' } } },
      env: { SERVICE_V3_ROUTER_8453: uni.swapRouter02 },
    })
    await importKey(stack.dataDir, owner.privateKey)
    await stack.start({ approver: true })
    try {
      const i = swapIntent(parseUnits('1000', 6).toString(), parseEther('0.3').toString(), 50)
      const asked = stack.post('/v1/tx/approve-request', i)
      const p = await waitFor(async () => ((await stack.get('/v1/approvals/pending')).body.pending as any[]).find((x) => x.summary.intentId === i.id) ?? null, { timeoutMs: 20_000, what: 'pending' })
      const lines = p.card.lines as Array<{ label: string; value: string }>
      expect(lines).toContainEqual(expect.objectContaining({ label: 'Buy at least', value: '0.3 WETH' }))
      expect(lines).toContainEqual({ label: 'Token in', value: tusd.address, kind: 'address' })
      expect(lines).toContainEqual({ label: 'Token out', value: fakeWeth.address, kind: 'address' })
      expect(lines).toContainEqual({ label: 'Router', value: uni.swapRouter02, kind: 'address' })
      const factors = p.card.lists.find((l: any) => l.title.startsWith('Risk factors')).items.join('\n')
      expect(factors).toContain(`token ${fakeWeth.address} reports the symbol WETH, but WETH on chain 8453 is`)
      expect(p.card.riskScore).toBeGreaterThanOrEqual(30)
      const why = p.card.lists.find((l: any) => l.title === 'Why approval is needed').items.join('\n')
      expect(why).toContain('reports the symbol WETH')
      await stack.decide(p.requestId, false)
      expect((await asked).status).toBe(403)
    } finally {
      await stack.stop()
    }
  }, 120_000)

  it('the lookalike alone needs an operator: sign-and-send without a token is refused, the fixture’s own WETH is not flagged', async () => {
    const stack = new Stack({ rpcUrls: { 8453: anvil.rpcUrl }, policy: { maxTxPerHour: 1000 }, env: { SERVICE_V3_ROUTER_8453: uni.swapRouter02 } })
    await importKey(stack.dataDir, owner.privateKey)
    await stack.start()
    try {
      // A minimum out at the simulated output, so nothing but the symbol stands in the way.
      const probe = await stack.post('/v1/tx/preflight', swapIntent('1000000', '1', 50))
      const out = diffOf(probe.body.balanceDiffs, fakeWeth.address)
      expect(out).toBeGreaterThan(0n)
      const i = swapIntent('1000000', out.toString(), 50)
      const pf = await stack.post('/v1/tx/preflight', i)
      expect(pf.body.riskFactors.map((f: any) => f.id)).toEqual(['lookalike_token_symbol'])
      const sent = await stack.post('/v1/tx/sign-and-send', { intent: i })
      expect(sent.status).toBe(403)
      expect(sent.body.error).toBe('approval_required')
      expect(sent.body.message).toContain('reports the symbol WETH')
      // The dev chain's WETH is the router's WETH9 (Base's chain id, another address than Base's WETH): not a lookalike.
      const weth: Asset = { kind: 'erc20', address: uni.weth as Address, symbol: 'WETH', decimals: 18 }
      const real = intentFor(WALLET, { type: 'swap_exact_in', router: uni.swapRouter02 as Address, assetIn: tusd, assetOut: weth, amountIn: '1000000', minAmountOut: '1' }, { maxGasWei: parseEther('0.05').toString(), maxSlippageBps: 50 })
      const realPf = await stack.post('/v1/tx/preflight', real)
      expect(realPf.status).toBe(200)
      expect(realPf.body.riskFactors.map((f: any) => f.id)).not.toContain('lookalike_token_symbol')
    } finally {
      await stack.stop()
    }
  }, 120_000)

  it('recipientAllowlist [BOB]: the review’s 50,000 TUSD swap into the attacker’s token (minAmountOut 0) is not signed without an operator', async () => {
    const stack = new Stack({ rpcUrls: { 8453: anvil.rpcUrl }, policy: { maxTxPerHour: 1000, recipientAllowlist: [BOB] }, env: { SERVICE_V3_ROUTER_8453: uni.swapRouter02 } })
    await importKey(stack.dataDir, owner.privateKey)
    await stack.start()
    try {
      const i = swapIntent(parseUnits('50000', 6).toString(), '0', 0)
      const pf = await stack.post('/v1/tx/preflight', i)
      expect(pf.body.riskFactors.map((f: any) => f.id).sort()).toEqual(['lookalike_token_symbol', 'slippage_unprotected'])
      const poolBefore = await erc20Balance(anvil.rpcUrl, 8453, uni.tokenB as Address, attackerPool)
      const sent = await stack.post('/v1/tx/sign-and-send', { intent: i })
      expect(sent.status).toBe(403)
      expect(sent.body.error).toBe('approval_required')
      expect(sent.body.message).toContain(`the swap buys token ${fakeWeth.address}, which is not in the token allowlist`)
      expect(sent.body.message).toContain('minAmountOut is 0')
      expect(await erc20Balance(anvil.rpcUrl, 8453, uni.tokenB as Address, attackerPool)).toBe(poolBefore)
      // The policy rule alone (a tight minimum, a real token): still an operator's call under the recipient allowlist.
      const tka: Asset = { kind: 'erc20', address: uni.tokenA as Address, symbol: 'TKA', decimals: 18 }
      const probe = intentFor(WALLET, { type: 'swap_exact_in', router: uni.swapRouter02 as Address, assetIn: tusd, assetOut: tka, amountIn: '1000000', minAmountOut: '1' }, { maxGasWei: parseEther('0.05').toString(), maxSlippageBps: 100 })
      const out = diffOf((await stack.post('/v1/tx/preflight', probe)).body.balanceDiffs, tka.address)
      const tight = { ...probe, id: randomUUID(), action: { ...probe.action, minAmountOut: out.toString() } } as TxIntent
      expect((await stack.post('/v1/tx/preflight', tight)).body.riskFactors).toEqual([])
      const refused = await stack.post('/v1/tx/sign-and-send', { intent: tight })
      expect(refused.status).toBe(403)
      expect(refused.body.message).toContain(`the swap buys token ${tka.address}, which is not in the token allowlist`)
    } finally {
      await stack.stop()
    }
  }, 120_000)

  it('a symbol written with letters of another script ("WЕTH", a Cyrillic Е) is not shown as a ticker and is flagged as WETH’s lookalike (found by review)', async () => {
    const cyrillic = await deployTestToken({ rpcUrl: anvil.rpcUrl, chainId: 8453, deployerKey: attacker.privateKey as Hex, name: 'Wrapped Ether', symbol: 'W\u0415TH', decimals: 18, supply: parseEther('1000') })
    const stack = new Stack({ rpcUrls: { 8453: anvil.rpcUrl }, policy: { maxTxPerHour: 1000 }, env: { SERVICE_V3_ROUTER_8453: uni.swapRouter02 } })
    await importKey(stack.dataDir, attacker.privateKey)
    await stack.start()
    try {
      const i = intentFor(attacker.address as Address, { type: 'transfer', asset: { kind: 'erc20', address: cyrillic }, to: BOB, amount: parseEther('2').toString() }, { maxGasWei: parseEther('0.05').toString() })
      const pf = await stack.post('/v1/tx/preflight', i)
      expect(pf.status).toBe(200)
      expect(pf.body.riskFactors).toContainEqual(
        expect.objectContaining({ id: 'lookalike_token_symbol', detail: expect.stringContaining(`token ${cyrillic} reports the symbol "W\\u0415TH" (read as WETH), but WETH on chain 8453 is`) }),
      )
      const built = await stack.post('/v1/tx/build', { ...i, id: randomUUID() })
      expect(built.body.description).toBe(`Transfer 2 of token ${cyrillic} to ${BOB} on Base`)
      // Needs an operator whatever the score: sign-and-send without a token is refused.
      const sent = await stack.post('/v1/tx/sign-and-send', { intent: i })
      expect(sent.status).toBe(403)
      expect(sent.body.error).toBe('approval_required')
    } finally {
      await stack.stop()
    }
  }, 120_000)
})
