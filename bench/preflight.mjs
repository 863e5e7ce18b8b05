// POST /v1/tx/preflight latency per action type against anvil, against the
// latency of one bare JSON-RPC round trip to the same node (eth_blockNumber),
// measured in the same run.
import { randomUUID } from 'node:crypto'
import path from 'node:path'
import { createPublicClient, createWalletClient, defineChain, erc20Abi, http, maxUint256 } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { fmt, root } from './lib.mjs'
import { devKeys, startAnvil, startStack } from './stack.mjs'

const N = 150

/**
 * @param {number[]} samples ms
 * @returns {{ p50: number, p99: number }}
 */
function quantiles(samples) {
  const s = [...samples].sort((a, b) => a - b)
  const q = (/** @type {number} */ p) => s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? NaN
  return { p50: q(0.5), p99: q(0.99) }
}

/**
 * p50 and p99 of `n` sequential runs of `fn`, after 10 not counted.
 * @param {() => Promise<unknown>} fn
 * @param {number} [n]
 */
async function timeMany(fn, n = N) {
  for (let i = 0; i < 10; i++) await fn() // warm caches and JIT
  const samples = []
  for (let i = 0; i < n; i++) {
    const t = performance.now()
    await fn()
    samples.push(performance.now() - t)
  }
  return quantiles(samples)
}

/** @returns {Promise<Record<string, { p50: number, p99: number }>>} ms by action, and of the round trip */
export async function benchPreflight() {
  const anvil = await startAnvil(8453)
  const wallet = privateKeyToAccount(devKeys[0]).address
  const fixturePath = path.join(root, 'scripts/uniswap-fixture.mjs')
  /** @type {typeof import('../scripts/uniswap-fixture.mjs')} */
  const { deployUniswapFixture } = await import(fixturePath)
  const uni = await deployUniswapFixture({ rpcUrl: anvil.rpcUrl, chainId: 8453, deployerKey: devKeys[1], fundWallets: [wallet] })
  // Setup outside the service: the wallet lets the router spend its TUSD, so swaps simulate as they would run.
  const chain = defineChain({ id: 8453, name: 'anvil', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [anvil.rpcUrl] } } })
  const walletClient = createWalletClient({ chain, transport: http(anvil.rpcUrl), account: privateKeyToAccount(devKeys[0]) })
  const publicClient = createPublicClient({ chain, transport: http(anvil.rpcUrl) })
  await publicClient.waitForTransactionReceipt({ hash: await walletClient.writeContract({ address: uni.tokenB, abi: erc20Abi, functionName: 'approve', args: [uni.swapRouter02, maxUint256] }) })
  const stack = await startStack({ keys: [devKeys[0]], rpcUrl: anvil.rpcUrl, env: { SERVICE_V3_ROUTER_8453: uni.swapRouter02 } })
  const now = () => Math.floor(Date.now() / 1000)
  const intent = (/** @type {object} */ action) => ({
    version: '1',
    id: randomUUID(),
    timestamp: now(),
    chain: { type: 'evm', chainId: 8453 },
    wallet: { address: wallet },
    action,
    constraints: { maxGasWei: '10000000000000000', deadline: now() + 600, maxSlippageBps: 50 },
  })
  const tokenA = { kind: 'erc20', address: uni.tokenA, symbol: 'TKA', decimals: 18 }
  const tokenB = { kind: 'erc20', address: uni.tokenB, symbol: 'TUSD', decimals: 6 }
  const actions = {
    transfer_native: () => ({ type: 'transfer_native', to: '0x000000000000000000000000000000000000bEEF', amount: '1000' }),
    transfer: () => ({ type: 'transfer', asset: tokenB, to: '0x000000000000000000000000000000000000bEEF', amount: '1000000' }),
    approve: () => ({ type: 'approve', asset: tokenA, spender: uni.swapRouter02, amount: '1000000000000000000' }),
    swap_exact_in: () => ({ type: 'swap_exact_in', router: uni.swapRouter02, assetIn: tokenB, assetOut: tokenA, amountIn: '1000000', minAmountOut: '1' }),
    swap_exact_out: () => ({ type: 'swap_exact_out', router: uni.swapRouter02, assetIn: tokenB, assetOut: tokenA, amountOut: '100000000000000', maxAmountIn: '10000000' }),
  }
  try {
    const rpcRoundTrip = await timeMany(() =>
      fetch(anvil.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}' }).then((r) => r.json()),
    )
    console.log(`\nPOST /v1/tx/preflight latency against anvil, sequential, ${N} requests per action (swaps on the local Uniswap v3 pool)`)
    console.log(`  ceiling: one eth_blockNumber round trip   p50 ${fmt(rpcRoundTrip.p50, 2)} ms  p99 ${fmt(rpcRoundTrip.p99, 2)} ms`)
    /** @type {Record<string, { p50: number, p99: number }>} */
    const results = { rpcRoundTrip }
    for (const [name, make] of Object.entries(actions)) {
      let failures = 0
      const q = await timeMany(async () => {
        const r = await fetch(`${stack.url}/v1/tx/preflight`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(intent(make())) })
        const body = /** @type {Partial<import('@countersign/shared').PreflightResult>} */ (await r.json())
        if (r.status !== 200 || body.simulationSuccess !== true) failures++
        return body
      })
      if (failures) throw new Error(`preflight ${name}: ${failures} requests failed or did not simulate successfully`)
      results[name] = q
      console.log(`  ${name.padEnd(16)} p50 ${fmt(q.p50, 2).padStart(6)} ms  p99 ${fmt(q.p99, 2).padStart(6)} ms   (p50 = ${fmt(q.p50 / rpcRoundTrip.p50, 1)} round trips)`)
    }
    return results
  } finally {
    await stack.stop()
    anvil.stop()
  }
}
