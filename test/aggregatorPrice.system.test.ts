// A malicious aggregator against a router with AggregationRouterV6's
// GenericRouter.swap semantics (placed at the aggregator router's address):
// the sold tokens go from the wallet to desc.srcReceiver, the executor is
// called and returns what it paid, returnAmount >= minReturnAmount, and the
// bought tokens go to dstReceiver. The aggregator chooses the executor and its
// minimum. The agent follows the documented flow: preflight to see the
// expected output, then minAmountOut = expected − 0.5%. (Adapted from the
// review that found the aggregator paying a tenth of the market, signed
// without approval at risk 0.)
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { encodeAbiParameters, encodeFunctionData, erc20Abi, parseEther, parseUnits, type Address, type Hex } from 'viem'
import { AGGREGATOR_ROUTER, aggregatorRouterAbi, type Asset, type TxIntent } from '@countersign/shared'
import { deployUniswapFixture } from '../scripts/uniswap-fixture.mjs'
import { anvilAccounts, rpc, startAnvil, type Anvil } from './support/anvil.js'
import { clientsFor, compileSolidity, erc20Balance, withGasHeadroom } from './support/contracts.js'
import { waitFor } from './support/processes.js'
import { intentFor } from './support/intents.js'
import { importKey, Stack } from './support/stack.js'

const SRC = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;
interface IERC20 { function transferFrom(address,address,uint256) external returns (bool); function transfer(address,uint256) external returns (bool); }
contract MiniRouterV6 {
    struct SwapDescription { address srcToken; address dstToken; address payable srcReceiver; address payable dstReceiver; uint256 amount; uint256 minReturnAmount; uint256 flags; }
    function swap(address executor, SwapDescription calldata desc, bytes calldata data) external payable returns (uint256 returnAmount, uint256 spentAmount) {
        require(desc.minReturnAmount != 0, "ZeroMinReturn");
        require(msg.value == 0, "InvalidMsgValue");
        require(IERC20(desc.srcToken).transferFrom(msg.sender, desc.srcReceiver, desc.amount), "pull");
        (bool ok, bytes memory ret) = executor.call(abi.encodePacked(bytes4(0x4b64e492), abi.encode(msg.sender), data, abi.encode(desc.amount)));
        require(ok && ret.length >= 32, "execute");
        returnAmount = abi.decode(ret, (uint256));
        spentAmount = desc.amount;
        require(returnAmount >= desc.minReturnAmount, "ReturnAmountIsNotEnough");
        require(IERC20(desc.dstToken).transfer(desc.dstReceiver == address(0) ? payable(msg.sender) : desc.dstReceiver, returnAmount), "send");
    }
}
contract PayingExecutor {
    // execute(address srcTokenOwner) with data = abi.encode(dstToken, pay): pays 'pay' from its own stock, keeps what it was sent.
    fallback(bytes calldata input) external payable returns (bytes memory) {
        (, address dst, uint256 pay) = abi.decode(input[4:100], (address, address, uint256));
        IERC20(dst).transfer(msg.sender, pay);
        return abi.encode(pay);
    }
}
`

const owner = anvilAccounts[0]
const deployer = anvilAccounts[1]
const WALLET = owner.address as Address
const THIEF = '0x00000000000000000000000000000000000bad00' as Address
const KEY = 'k'
let anvil: Anvil
let uni: Awaited<ReturnType<typeof deployUniswapFixture>>
let tusd: Asset
let tka: Asset
let executor: Address
let server: http.Server
let stack: Stack
/** What the aggregator answers: where the sold tokens go, what the executor pays, the minimum it guarantees. */
const quote = { srcReceiver: 'executor' as 'executor' | Address, pay: 0n, minReturn: 0n, asked: 0 }

async function deploy(name: string): Promise<Address> {
  const { abi, bytecode } = compileSolidity({ 'Mini.sol': SRC }, { file: 'Mini.sol', name })
  const { pub, wallet } = clientsFor(anvil.rpcUrl, 8453, deployer.privateKey as Hex)
  const hash = await wallet!.deployContract({ abi, bytecode, args: [], gas: 3_000_000n } as never)
  return (await pub.waitForTransactionReceipt({ hash, pollingInterval: 50 })).contractAddress as Address
}

async function write(key: Hex, address: Address, functionName: 'approve' | 'transfer', args: [Address, bigint]) {
  const { pub, wallet } = clientsFor(anvil.rpcUrl, 8453, key)
  const gas = withGasHeadroom(await pub.estimateContractGas({ address, abi: erc20Abi, functionName, args, account: wallet!.account }))
  const hash = await wallet!.writeContract({ address, abi: erc20Abi, functionName, args, gas })
  await pub.waitForTransactionReceipt({ hash, pollingInterval: 50 })
}

function answer(q: Record<string, string>): string {
  quote.asked += 1
  const data = encodeFunctionData({
    abi: aggregatorRouterAbi,
    functionName: 'swap',
    args: [
      executor,
      {
        srcToken: q.src as Hex,
        dstToken: q.dst as Hex,
        srcReceiver: quote.srcReceiver === 'executor' ? executor : quote.srcReceiver,
        dstReceiver: q.receiver as Hex,
        amount: BigInt(q.amount!),
        minReturnAmount: quote.minReturn,
        flags: 0n,
      },
      encodeAbiParameters([{ type: 'address' }, { type: 'uint256' }], [q.dst as Hex, quote.pay]),
    ],
  })
  // It claims a great price whatever it pays.
  return JSON.stringify({ dstAmount: parseEther('497').toString(), tx: { from: q.from, to: AGGREGATOR_ROUTER, data, value: '0', gas: 300000, gasPrice: '1' } })
}

beforeAll(async () => {
  anvil = await startAnvil({ chainId: 8453 })
  uni = await deployUniswapFixture({ rpcUrl: anvil.rpcUrl, chainId: 8453, deployerKey: deployer.privateKey, fundWallets: [WALLET], fundAmount: 100_000n })
  tusd = { kind: 'erc20', address: uni.tokenB as Address, symbol: 'TUSD', decimals: 6 }
  tka = { kind: 'erc20', address: uni.tokenA as Address, symbol: 'TKA', decimals: 18 }
  const router = await deploy('MiniRouterV6')
  await rpc(anvil.rpcUrl, 'anvil_setCode', [AGGREGATOR_ROUTER, await rpc(anvil.rpcUrl, 'eth_getCode', [router, 'latest'])])
  executor = await deploy('PayingExecutor')
  await write(deployer.privateKey as Hex, uni.tokenA as Address, 'transfer', [executor, parseEther('10000')])
  // The wallet has approved the aggregator router only: the gateway's v3 price must not need a v3 allowance.
  await write(owner.privateKey as Hex, uni.tokenB as Address, 'approve', [AGGREGATOR_ROUTER, 10n ** 12n])

  server = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(answer(Object.fromEntries(new URL(req.url ?? '/', 'http://x').searchParams)))
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  stack = new Stack({ rpcUrls: { 8453: anvil.rpcUrl }, policy: { maxTxPerHour: 1000 }, env: { AGGREGATOR_API_KEY: KEY, SERVICE_AGGREGATOR_URL: url, SERVICE_V3_ROUTER_8453: uni.swapRouter02 } })
  await importKey(stack.dataDir, owner.privateKey)
  await stack.start()
}, 180_000)

afterAll(async () => {
  await stack?.stop()
  await new Promise((r) => server?.close(r))
  await anvil?.stop()
})

const diffOf = (diffs: Array<{ token: string; change: string }>, token: string) => BigInt(diffs.find((d) => d.token.toLowerCase() === token.toLowerCase())?.change ?? '0')
const AMOUNT_IN = parseUnits('1000', 6)
const swap = (minAmountOut: bigint, provider: 'aggregator' | 'v3_router', maxSlippageBps = 50): TxIntent =>
  intentFor(
    WALLET,
    { type: 'swap_exact_in', provider, router: provider === 'aggregator' ? AGGREGATOR_ROUTER : (uni.swapRouter02 as Address), assetIn: tusd, assetOut: tka, amountIn: AMOUNT_IN.toString(), minAmountOut: minAmountOut.toString() },
    { maxGasWei: parseEther('0.05').toString(), maxSlippageBps },
  )

/** The market: what the v3 route's simulation gives the wallet for AMOUNT_IN now. */
async function market(): Promise<bigint> {
  const v3 = await stack.post('/v1/tx/preflight', swap(1n, 'v3_router'))
  return diffOf(v3.body.balanceDiffs, tka.address)
}

/** The agent's documented flow: preflight with no minimum, then minAmountOut = expected − 0.5%, sign-and-send. */
async function documentedFlow(maxSlippageBps = 50) {
  const probeIntent = swap(1n, 'aggregator', maxSlippageBps)
  const probe = await stack.post('/v1/tx/preflight', probeIntent)
  expect(probe.status).toBe(200)
  const expected = diffOf(probe.body.balanceDiffs, tka.address)
  // The route the preflight simulated (stored for the intent: no second quote).
  const probed = (await stack.post('/v1/tx/build', probeIntent)).body as { txRequest: { to: string }; description: string }
  const intent = swap((expected * 995n) / 1000n, 'aggregator', maxSlippageBps)
  const built = await stack.post('/v1/tx/build', intent)
  expect(built.status).toBe(200)
  const tka0 = await erc20Balance(anvil.rpcUrl, 8453, tka.address, WALLET)
  const thief0 = await erc20Balance(anvil.rpcUrl, 8453, tusd.address, THIEF)
  const executor0 = await erc20Balance(anvil.rpcUrl, 8453, tusd.address, executor)
  const sent = await stack.post('/v1/tx/sign-and-send', { intent })
  expect(sent.status).toBe(200)
  const receipt = await waitFor(async () => {
    const r = await stack.get(`/v1/tx/${sent.body.txHash}`)
    return r.status === 200 ? r.body : null
  })
  expect(receipt.status).toBe('success')
  return {
    expected,
    probed,
    built: built.body as { txRequest: { to: string }; description: string },
    walletGot: (await erc20Balance(anvil.rpcUrl, 8453, tka.address, WALLET)) - tka0,
    thiefGot: (await erc20Balance(anvil.rpcUrl, 8453, tusd.address, THIEF)) - thief0,
    executorGot: (await erc20Balance(anvil.rpcUrl, 8453, tusd.address, executor)) - executor0,
  }
}

describe('an aggregator that pays less than the v3 route', () => {
  it('an executor paying a tenth of the market: the v3 route is used instead, the wallet gets the v3 price, and the description says why', async () => {
    // v3 needs its own allowance to send; the price check before this did not.
    await write(owner.privateKey as Hex, uni.tokenB as Address, 'approve', [uni.swapRouter02 as Address, 10n ** 12n])
    const v3 = await market()
    quote.srcReceiver = 'executor'
    quote.pay = v3 / 10n
    quote.minReturn = v3 / 10n
    const asked = quote.asked
    const run = await documentedFlow()
    expect(quote.asked).toBeGreaterThan(asked)
    // The preflight the agent reads already shows the v3 route and says why.
    expect(run.probed.txRequest.to).toBe(uni.swapRouter02)
    expect(run.built.txRequest.to).toBe(uni.swapRouter02)
    expect(run.probed.description).toMatch(/via Uniswap v3 router; aggregator unavailable: its guaranteed minimum of \d+ base units of 0x[0-9a-fA-F]{40} is below the \d+ that the Uniswap v3 route's \d+ less the intent's 50 bps slippage gives/)
    expect(run.expected).toBeGreaterThan((v3 * 99n) / 100n)
    expect(run.walletGot).toBeGreaterThan((v3 * 98n) / 100n)
    expect(run.executorGot).toBe(0n)
  }, 120_000)

  // Found by review: the floor was the v3 output less the intent's own maxSlippageBps, so an intent
  // declaring 10000 had none, and the tenth of the market was signed and mined with no operator.
  it('an intent declaring maxSlippageBps 10000 is held to the policy’s maxSwapSlippageBps: the v3 route is used', async () => {
    const v3 = await market()
    quote.srcReceiver = 'executor'
    quote.pay = v3 / 10n
    quote.minReturn = v3 / 10n
    const run = await documentedFlow(10_000)
    expect(run.probed.txRequest.to).toBe(uni.swapRouter02)
    expect(run.built.txRequest.to).toBe(uni.swapRouter02)
    expect(run.probed.description).toMatch(/aggregator unavailable: .* less the policy's maxSwapSlippageBps of 300 \(the intent declares 10000\) gives/)
    expect(run.walletGot).toBeGreaterThan((v3 * 98n) / 100n)
    expect(run.executorGot).toBe(0n)
  }, 120_000)

  it('a quote that sends the sold tokens to another address is not used even when it pays the market', async () => {
    const v3 = await market()
    quote.srcReceiver = THIEF
    quote.pay = (v3 * 101n) / 100n
    quote.minReturn = quote.pay
    const run = await documentedFlow()
    expect(run.probed.txRequest.to).toBe(uni.swapRouter02)
    expect(run.built.txRequest.to).toBe(uni.swapRouter02)
    expect(run.probed.description).toMatch(/aggregator unavailable: .*the sold tokens go to 0x0+bad00, not to the executor/i)
    expect(run.thiefGot).toBe(0n)
  }, 120_000)

  it('an aggregator at least as good as v3 is used, and the description shows both outputs', async () => {
    const v3 = await market()
    quote.srcReceiver = 'executor'
    quote.pay = (v3 * 1002n) / 1000n
    quote.minReturn = (quote.pay * 995n) / 1000n
    const run = await documentedFlow()
    expect(run.probed.txRequest.to).toBe(AGGREGATOR_ROUTER)
    expect(run.built.txRequest.to).toBe(AGGREGATOR_ROUTER)
    expect(run.built.description).toMatch(/via the aggregator router, calldata from its quote\); the aggregator guarantees at least [\d.]+ TKA, the Uniswap v3 route would give [\d.]+ TKA$/)
    expect(run.walletGot).toBe(quote.pay)
    expect(run.executorGot).toBe(AMOUNT_IN)
  }, 120_000)
})
