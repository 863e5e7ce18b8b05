// The transaction's life after the signer, against anvil behind a JSON-RPC
// node that lies or stalls where a test says (found by review): a receipt
// that lags, a retry that overlaps its first call, a gateway killed between
// the broadcast and its record, a transaction the node drops from its pool.
// The tests share one chain and run in order.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseEther, type Address, type Hex } from 'viem'
import type { TxIntent } from '@countersign/shared'
import { anvilAccounts, rpc, startAnvil, type Anvil } from './support/anvil.js'
import { deployTestToken, erc20Balance } from './support/contracts.js'
import { BOB, intentFor } from './support/intents.js'
import { resultOf, startRpcProxy, type RpcProxy } from './support/rpcProxy.js'
import { importKey, Stack } from './support/stack.js'

let chain: Anvil
let stack: Stack
let node: RpcProxy
let TOKEN: Address

const owner = anvilAccounts[2]
const WALLET = owner.address as Address
const transfer = (wei: bigint | number, o: Partial<TxIntent> = {}): TxIntent =>
  intentFor(WALLET, { type: 'transfer_native', to: BOB, amount: String(wei) }, { maxGasWei: parseEther('0.01').toString(), extra: o })
const receiptOf = (hash: string) => rpc<{ status: string } | null>(chain.rpcUrl, 'eth_getTransactionReceipt', [hash])
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
async function sentToBob(): Promise<Array<{ hash: Hex; nonce: number; value: bigint }>> {
  const latest = Number(await rpc<string>(chain.rpcUrl, 'eth_blockNumber'))
  const out = []
  for (let n = 0; n <= latest; n++) {
    const b = await rpc<any>(chain.rpcUrl, 'eth_getBlockByNumber', [`0x${n.toString(16)}`, true])
    for (const tx of b.transactions) if (tx.from.toLowerCase() === WALLET.toLowerCase()) out.push({ hash: tx.hash, nonce: Number(tx.nonce), value: BigInt(tx.value) })
  }
  return out
}

beforeAll(async () => {
  chain = await startAnvil({ chainId: 8453 })
  node = await startRpcProxy(chain.rpcUrl)
  TOKEN = await deployTestToken({ rpcUrl: chain.rpcUrl, chainId: 8453, deployerKey: owner.privateKey as Hex, name: 'Test', symbol: 'TST', decimals: 6, supply: 1_000_000n })
  stack = new Stack({ rpcUrls: { 8453: node.url }, policy: { maxTxPerHour: 10_000, requireApprovalAbove: { valueWei: parseEther('1000').toString() }, tokenAllowlist: [TOKEN], contractAllowlist: [TOKEN] } })
  expect(await importKey(stack.dataDir, owner.privateKey)).toBe(WALLET)
  await stack.start()
}, 120_000)

afterAll(async () => {
  await stack?.stop()
  await chain?.stop()
  node?.server.close()
})

describe('after the signer: one intent, one transaction, whatever the node or a crash does', () => {
  it('a node whose receipt lags does not make a retry sign and send a mined intent again', async () => {
    node.answer(undefined)
    const a = transfer(1_111_111)
    const first = await stack.post('/v1/tx/sign-and-send', { intent: a })
    expect((await receiptOf(first.body.txHash))?.status).toBe('0x1')
    // The node (or the one behind a load balancer that answers receipts) has not indexed the receipt yet.
    node.answer((c) => (c.method === 'eth_getTransactionReceipt' && c.params[0] === first.body.txHash ? resultOf(c, null) : undefined))
    const retry = await stack.post('/v1/tx/sign-and-send', { intent: a })
    node.answer(undefined)
    const mined = (await sentToBob()).filter((t) => t.value === 1_111_111n)
    expect(mined.length).toBe(1)
    // The transaction index still shows it in a block: that is the answer.
    expect(retry).toMatchObject({ status: 200, body: { txHash: first.body.txHash } })
    // A node that shows it nowhere (receipt and transaction both missing): nothing is signed, 502.
    node.answer((c) => ((c.method === 'eth_getTransactionReceipt' || c.method === 'eth_getTransactionByHash') && c.params[0] === first.body.txHash ? resultOf(c, null) : undefined))
    const blind = await stack.post('/v1/tx/sign-and-send', { intent: a })
    node.answer(undefined)
    expect(blind.status).toBe(502)
    expect(blind.body).toMatchObject({ error: 'rpc_error', message: expect.stringContaining('nothing was signed again') })
    expect((await sentToBob()).filter((t) => t.value === 1_111_111n)).toHaveLength(1)
    // With the node caught up, the retry gets the mined transaction.
    expect(await stack.post('/v1/tx/sign-and-send', { intent: a })).toMatchObject({ status: 200, body: { txHash: first.body.txHash } })
  })

  it('a retry that overlaps its first call (a client timeout) gets the transaction the first call sent, not "would fail"', async () => {
    const bal = await erc20Balance(chain.rpcUrl, TOKEN, WALLET)
    const a = intentFor(WALLET, { type: 'transfer', asset: { kind: 'erc20', address: TOKEN }, to: BOB, amount: bal.toString() } as never)
    let delayed = false
    node.answer(async (c, forward) => {
      if (c.method !== 'eth_sendRawTransaction' || delayed) return undefined
      delayed = true
      const r = await forward()
      await sleep(1500) // a slow node answer: the first call is still in the wallet queue
      return r
    })
    const p1 = stack.post('/v1/tx/sign-and-send', { intent: a })
    await sleep(400)
    const r2 = await stack.post('/v1/tx/sign-and-send', { intent: a })
    const r1 = await p1
    node.answer(undefined)
    expect(r1.status).toBe(200)
    expect(r2).toMatchObject({ status: 200, body: { txHash: r1.body.txHash } })
  })

  it('a gateway killed after the broadcast, before its answer: the retry after restart gets the mined transaction, not 403', async () => {
    const bal = await erc20Balance(chain.rpcUrl, TOKEN, WALLET)
    const a = intentFor(WALLET, { type: 'transfer', asset: { kind: 'erc20', address: TOKEN }, to: BOB, amount: bal.toString() } as never)
    let held: (() => void) | undefined
    let sentHash: string | undefined
    node.answer(async (c, forward) => {
      if (c.method !== 'eth_sendRawTransaction' || held) return undefined
      const r = (await forward()) as { result: string }
      sentHash = r.result
      await new Promise<void>((res) => (held = res))
      return r
    })
    const p1 = stack.post('/v1/tx/sign-and-send', { intent: a }).catch((e) => ({ status: 0, body: String(e) }))
    while (!sentHash) await sleep(20)
    stack.gateway.child.kill('SIGKILL')
    await stack.gateway.exited()
    held!()
    node.answer(undefined)
    await stack.startGateway()
    const retry = await stack.post('/v1/tx/sign-and-send', { intent: a })
    expect(retry).toMatchObject({ status: 200, body: { txHash: sentHash } })
  })

  it('a transaction the node drops from its pool leaves no gap: the next one takes its nonce and mines; the dropped intent is signed anew on its retry', async () => {
    node.answer(undefined)
    await rpc(chain.rpcUrl, 'evm_setAutomine', [false])
    try {
      const a = transfer(2_222_221)
      const ra = await stack.post('/v1/tx/sign-and-send', { intent: a })
      // The node evicts it (pool overflow, restart, fee too low for hours): simulated with anvil_dropTransaction.
      await rpc(chain.rpcUrl, 'anvil_dropTransaction', [ra.body.txHash])
      const b = await stack.post('/v1/tx/sign-and-send', { intent: transfer(2_222_222) })
      const c = await stack.post('/v1/tx/sign-and-send', { intent: transfer(2_222_223) })
      await rpc(chain.rpcUrl, 'evm_mine', [])
      await rpc(chain.rpcUrl, 'evm_mine', [])
      expect(await receiptOf(b.body.txHash)).not.toBeNull()
      expect(await receiptOf(c.body.txHash)).not.toBeNull()
      // The dropped intent's retry: its transaction is dead (B took its nonce), so it is signed again and mines.
      const again = await stack.post('/v1/tx/sign-and-send', { intent: a })
      expect(again.status).toBe(200)
      expect(again.body.txHash).not.toBe(ra.body.txHash)
      await rpc(chain.rpcUrl, 'evm_mine', [])
      expect(await receiptOf(again.body.txHash)).not.toBeNull()
      expect((await sentToBob()).filter((t) => t.value === 2_222_221n)).toHaveLength(1)
    } finally {
      await rpc(chain.rpcUrl, 'evm_setAutomine', [true])
    }
  })
})
