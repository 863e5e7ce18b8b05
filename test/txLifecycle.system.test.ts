// The transaction's life after the signer, against anvil behind a JSON-RPC
// node that lies or stalls where a test says (found by review): a receipt
// that lags, a retry that overlaps its first call, a gateway killed between
// the broadcast and its record, a transaction the node drops from its pool,
// an intent that needed approval whose transaction was lost, and a node that
// fails to answer eth_estimateGas or eth_call (502, not "would fail on chain").
// The tests share one chain and run in order.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseEther, type Address, type Hex } from 'viem'
import type { TxIntent } from '@countersign/shared'
import { anvilAccounts, rpc, startAnvil, type Anvil } from './support/anvil.js'
import { deployTestToken, erc20Balance } from './support/contracts.js'
import { BOB, intentFor } from './support/intents.js'
import { resultOf, startRpcProxy, type RpcProxy } from './support/rpcProxy.js'
import { importKey, Stack, writePolicy } from './support/stack.js'

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
async function sentToBob(wallet: Address = WALLET): Promise<Array<{ hash: Hex; nonce: number; value: bigint }>> {
  const latest = Number(await rpc<string>(chain.rpcUrl, 'eth_blockNumber'))
  const out = []
  for (let n = 0; n <= latest; n++) {
    const b = await rpc<any>(chain.rpcUrl, 'eth_getBlockByNumber', [`0x${n.toString(16)}`, true])
    for (const tx of b.transactions) if (tx.from.toLowerCase() === wallet.toLowerCase()) out.push({ hash: tx.hash, nonce: Number(tx.nonce), value: BigInt(tx.value) })
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

  it('retries of a mined intent answer its transaction without sending it again or auditing another broadcast', async () => {
    node.answer(undefined)
    const a = transfer(1_212_121)
    const first = await stack.post('/v1/tx/sign-and-send', { intent: a })
    expect((await receiptOf(first.body.txHash))?.status).toBe('0x1')
    let sends = 0
    node.answer((c) => {
      if (c.method === 'eth_sendRawTransaction') sends += 1
      return undefined
    })
    const retries = await Promise.all(Array.from({ length: 50 }, () => stack.post('/v1/tx/sign-and-send', { intent: a })))
    node.answer(undefined)
    for (const r of retries) expect(r).toMatchObject({ status: 200, body: { txHash: first.body.txHash, signedTx: first.body.signedTx, broadcast: true, broadcastError: null } })
    // Before, each retry went through the wallet's queue to the node and into the log (a flood held the wallet's next transaction).
    expect(sends).toBe(0)
    const events = (await stack.get('/v1/approvals/history?limit=100')).body.events.filter((e: { intentId: string }) => e.intentId === a.id)
    expect(events.filter((e: { event: string }) => e.event === 'tx_broadcast')).toHaveLength(1)
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

  it('a transaction the node drops from its pool leaves no gap: the next one takes its nonce and mines; the dropped intent is not signed again while that block can still be reorganised away, nor afterwards without an operator', async () => {
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
      // The dropped intent's retry while B's block is newer than the node's safe block (anvil: 32 blocks back):
      // a reorganisation could still drop B and mine A (the client holds A's signed bytes), so signing A again
      // now could pay twice (found by review: anvil_reorg did). Nothing is signed; retry later.
      const early = await stack.post('/v1/tx/sign-and-send', { intent: a })
      expect(early.status).toBe(502)
      expect(early.body).toMatchObject({ error: 'rpc_error', message: expect.stringContaining('which the node does not count as safe yet') })
      expect(early.body.message).toContain(`its nonce ${Number((await rpc<{ nonce: string }>(chain.rpcUrl, 'eth_getTransactionByHash', [b.body.txHash])).nonce)} went to transaction ${b.body.txHash}`)
      // Once it is safe, A is dead: signing it again needs an operator, even though policy allows it without one.
      await rpc(chain.rpcUrl, 'anvil_mine', ['0x20'])
      const later = await stack.post('/v1/tx/sign-and-send', { intent: a })
      expect(later.status).toBe(403)
      expect(later.body.error).toBe('approval_required')
      expect(later.body.message).toContain(`transaction ${ra.body.txHash}`)
      expect(later.body.message).toContain('call POST /v1/tx/approve-request with the same intent')
      await rpc(chain.rpcUrl, 'evm_mine', [])
      expect((await sentToBob()).filter((t) => t.value === 2_222_221n)).toHaveLength(0)
    } finally {
      await rpc(chain.rpcUrl, 'evm_setAutomine', [true])
    }
  })

  it('an intent that needed approval whose transaction was lost: sign-and-send says a new approval is needed, approve-request asks again (not the kept decision with the spent token), and the intent is signed again once', async () => {
    const approving = anvilAccounts[4]
    const W = approving.address as Address
    // Every native transfer needs an approval; the approver grants it at once.
    const auto = new Stack({ rpcUrls: { 8453: chain.rpcUrl }, policy: { maxTxPerHour: 10_000, requireApprovalAbove: { valueWei: '1' } }, env: { SERVICE_APPROVAL_MODE: 'auto' } })
    expect(await importKey(auto.dataDir, approving.privateKey)).toBe(W)
    const pay = (wei: number) => intentFor(W, { type: 'transfer_native', to: BOB, amount: String(wei) }, { maxGasWei: parseEther('0.01').toString() })
    const approveAndSend = async (intent: TxIntent) => {
      const approved = await auto.post('/v1/tx/approve-request', intent)
      expect(approved).toMatchObject({ status: 200, body: { approved: true, approvalRequired: true } })
      const sent = await auto.post('/v1/tx/sign-and-send', { intent, approvalTokenId: approved.body.approvalTokenId })
      expect(sent.status).toBe(200)
      return { token: approved.body.approvalTokenId as string, hash: sent.body.txHash as Hex }
    }
    await auto.start({ approver: true })
    await rpc(chain.rpcUrl, 'evm_setAutomine', [false])
    try {
      const a = pay(3_333_331)
      const first = await approveAndSend(a)
      await rpc(chain.rpcUrl, 'anvil_dropTransaction', [first.hash])
      // Another approved intent of the wallet takes the lost one's nonce and is mined.
      const b = await approveAndSend(pay(3_333_332))
      await rpc(chain.rpcUrl, 'evm_mine', [])
      expect(await receiptOf(b.hash)).not.toBeNull()
      // B's block becomes safe (anvil counts 32 blocks back): only then is A lost for good.
      await rpc(chain.rpcUrl, 'anvil_mine', ['0x20'])

      // The retry with the token the lost transaction used: refused, and told how to go on.
      const retry = await auto.post('/v1/tx/sign-and-send', { intent: a, approvalTokenId: first.token })
      expect(retry.status).toBe(403)
      expect(retry.body.error).toBe('invalid_approval_token')
      expect(retry.body.message).toContain(`transaction ${first.hash}`)
      expect(retry.body.message).toContain('call POST /v1/tx/approve-request with the same intent')

      // approve-request asks again: a new request and token, not the decision kept with the spent one.
      const again = await auto.post('/v1/tx/approve-request', a)
      expect(again).toMatchObject({ status: 200, body: { approved: true, approvalRequired: true } })
      expect(again.body.approvalTokenId).not.toBe(first.token)
      const replaced = await auto.post('/v1/tx/sign-and-send', { intent: a, approvalTokenId: again.body.approvalTokenId })
      expect(replaced.status).toBe(200)
      expect(replaced.body.txHash).not.toBe(first.hash)
      await rpc(chain.rpcUrl, 'evm_mine', [])
      expect(await receiptOf(replaced.body.txHash)).not.toBeNull()
      // A retry of the whole thing now gets what was sent: no new approval (nothing is signed), the mined transaction.
      const retried = await auto.post('/v1/tx/approve-request', a)
      expect(retried).toMatchObject({ status: 200, body: { approved: true, approvalRequired: false } })
      expect(retried.body).not.toHaveProperty('approvalTokenId')
      expect(retried.body.warnings).toContainEqual(expect.stringContaining(`transaction ${replaced.body.txHash}`))
      expect(await auto.post('/v1/tx/sign-and-send', { intent: a, approvalTokenId: again.body.approvalTokenId })).toMatchObject({ status: 200, body: { txHash: replaced.body.txHash } })
      expect(await auto.post('/v1/tx/sign-and-send', { intent: a })).toMatchObject({ status: 200, body: { txHash: replaced.body.txHash } })

      // What the operator (and the log) were told: the second request names the transaction it replaces, first among its reasons.
      const events = (await auto.get('/v1/approvals/history?limit=100')).body.events.filter((e: { intentId: string }) => e.intentId === a.id).reverse()
      const requested = events.filter((e: { event: string }) => e.event === 'approval_requested')
      expect(requested).toHaveLength(2)
      expect(requested[0].data).not.toHaveProperty('replacing')
      expect(requested[1].data.replacing).toBe(first.hash)
      expect(events.filter((e: { event: string }) => e.event === 'signature_replaced')).toHaveLength(1)
      // One payment of this amount on chain.
      const paid = []
      const latest = Number(await rpc<string>(chain.rpcUrl, 'eth_blockNumber'))
      for (let n = 0; n <= latest; n++) {
        const block = await rpc<any>(chain.rpcUrl, 'eth_getBlockByNumber', [`0x${n.toString(16)}`, true])
        for (const tx of block.transactions) if (tx.from.toLowerCase() === W.toLowerCase() && BigInt(tx.value) === 3_333_331n) paid.push(tx.hash)
      }
      expect(paid).toEqual([replaced.body.txHash])
      expect(await auto.auditVerify()).toMatch(/^audit chain OK/)
    } finally {
      await rpc(chain.rpcUrl, 'evm_setAutomine', [true])
      await auto.stop()
    }
  })

  it('an intent signed before whose approval is asked again (policy now sends it to an operator): answered at once, nobody asked, no token; sign-and-send gives the same transaction', async () => {
    const paying = anvilAccounts[3]
    const W = paying.address as Address
    const later = new Stack({ rpcUrls: { 8453: chain.rpcUrl }, policy: { maxTxPerHour: 10_000, requireApprovalAbove: { valueWei: parseEther('1000').toString() } } })
    expect(await importKey(later.dataDir, paying.privateKey)).toBe(W)
    const pay = (wei: number) => intentFor(W, { type: 'transfer_native', to: BOB, amount: String(wei) }, { maxGasWei: parseEther('0.01').toString() })
    const paidOnChain = async (wei: bigint) => (await sentToBob(W)).filter((t) => t.value === wei)
    await later.start({ approver: true })
    try {
      const a = pay(5_555_551)
      const first = await later.post('/v1/tx/sign-and-send', { intent: a })
      expect(first).toMatchObject({ status: 200, body: { broadcast: true } })
      expect((await receiptOf(first.body.txHash))?.status).toBe('0x1')

      // Every transfer needs an operator from now on (the web channel; nobody decides in this test).
      await later.stop()
      writePolicy(later.dataDir, { maxTxPerHour: 10_000, requireApprovalAbove: { valueWei: '1' } })
      await later.start({ approver: true })
      expect(await later.post('/v1/tx/sign-and-send', { intent: pay(5_555_552) })).toMatchObject({ status: 403, body: { error: 'approval_required' } })

      // Before, this call waited for an operator (300 s) to approve a payment already made, or to "decline" it.
      const res = await fetch(`${later.url}/v1/tx/approve-request`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(a), signal: AbortSignal.timeout(15_000) })
      const answer = (await res.json()) as any
      expect(res.status).toBe(200)
      expect(answer).toMatchObject({ intentId: a.id, approved: true, approvalRequired: false, policyDecision: { decision: 'require_approval' } })
      expect(answer).not.toHaveProperty('approvalTokenId')
      expect(answer.warnings).toContainEqual(expect.stringContaining(`signed before (transaction ${first.body.txHash}`))
      const pending = (await later.get('/v1/approvals/pending')).body.pending as Array<{ summary: { intentId: string } }>
      expect(pending.filter((p) => p.summary.intentId === a.id)).toHaveLength(0)

      const again = await later.post('/v1/tx/sign-and-send', { intent: a })
      expect(again).toMatchObject({ status: 200, body: { txHash: first.body.txHash, signedTx: first.body.signedTx, broadcast: true } })
      expect(await paidOnChain(5_555_551n)).toHaveLength(1)

      // The log says why nobody was asked.
      const events = (await later.get('/v1/approvals/history?limit=100')).body.events.filter((e: { intentId: string }) => e.intentId === a.id)
      expect(events.filter((e: { event: string }) => e.event === 'approval_requested')).toHaveLength(0)
      expect(events).toContainEqual(expect.objectContaining({ event: 'approve_request_created', data: expect.objectContaining({ decision: 'require_approval', signedBefore: first.body.txHash }) }))
      expect(await later.auditVerify()).toMatch(/^audit chain OK/)
    } finally {
      await later.stop()
    }
  })

  it('a node that lies (a mined transaction "unknown", another of ours "mined" at its nonce) gets no second transaction of an intent signed without an operator', async () => {
    node.answer(undefined)
    const a = transfer(7_777_771)
    const first = await stack.post('/v1/tx/sign-and-send', { intent: a })
    expect(first).toMatchObject({ status: 200, body: { broadcast: true } })
    const hashA = first.body.txHash as string
    const nonceA = Number((await rpc<{ nonce: string }>(chain.rpcUrl, 'eth_getTransactionByHash', [hashA])).nonce)
    // Deep enough that any block the node names is below its safe block.
    await rpc(chain.rpcUrl, 'anvil_mine', ['0x30'])
    const hidesA = (c: { method: string; params: any[] }) =>
      (c.method === 'eth_getTransactionReceipt' || c.method === 'eth_getTransactionByHash') && String(c.params[0]).toLowerCase() === hashA.toLowerCase()
    // The node hides A and says the pending count is A's nonce: B is given A's nonce (the node refuses it).
    node.answer((c) => (hidesA(c) ? resultOf(c, null) : c.method === 'eth_getTransactionCount' && c.params[1] === 'pending' ? resultOf(c, `0x${nonceA.toString(16)}`) : undefined))
    const b = await stack.post('/v1/tx/sign-and-send', { intent: transfer(7_777_772) })
    expect(b.status).toBe(200)
    const hashB = b.body.txHash as string
    // Then it shows B mined (an old, safe block) and A nowhere: A looks lost for good.
    node.answer((c) =>
      hidesA(c)
        ? resultOf(c, null)
        : c.method === 'eth_getTransactionReceipt' && String(c.params[0]).toLowerCase() === hashB.toLowerCase()
          ? resultOf(c, { transactionHash: hashB, status: '0x1', blockNumber: '0x1', blockHash: `0x${'11'.repeat(32)}`, gasUsed: '0x5208', logs: [] })
          : undefined,
    )
    const retry = await stack.post('/v1/tx/sign-and-send', { intent: a })
    node.answer(undefined)
    // Before, the signer took the gateway's word and signed A again at the next nonce: A was paid twice.
    expect(retry.status).toBe(403)
    expect(retry.body.error).toBe('approval_required')
    expect((await sentToBob()).filter((t) => t.value === 7_777_771n).map((t) => t.hash)).toEqual([hashA])
    // The signer refused it itself, and said so in the log.
    const events = (await stack.get('/v1/approvals/history?limit=100')).body.events.filter((e: { intentId: string }) => e.intentId === a.id)
    expect(events.some((e: { event: string; data: { reason?: string; replaces?: string } }) => e.event === 'signing_denied' && e.data.reason === 'missing_approval_token' && e.data.replaces === hashA)).toBe(true)
    expect(events.some((e: { event: string }) => e.event === 'signature_replaced')).toBe(false)
  })

  it('a retry after the deadline of a transaction signed before it and never mined: 403 saying it is not sent again (and why), not a broadcast after the deadline', async () => {
    await rpc(chain.rpcUrl, 'evm_setAutomine', [false])
    try {
      const late = intentFor(WALLET, { type: 'transfer_native', to: BOB, amount: '4444441' }, { maxGasWei: parseEther('0.01').toString(), deadlineOffset: 2 })
      const first = await stack.post('/v1/tx/sign-and-send', { intent: late })
      expect(first.status).toBe(200)
      await sleep(3_000)
      const retry = await stack.post('/v1/tx/sign-and-send', { intent: late })
      expect(retry.status).toBe(403)
      expect(retry.body.error).toBe('policy_denied')
      expect(retry.body.reasons.join(' ')).toMatch(new RegExp(`has passed: transaction ${first.body.txHash} \\(nonce \\d+\\), signed before it and not mined, is not sent again`))
      // The node still holds it (as the answer says); taken out so the chain is left as it was.
      await rpc(chain.rpcUrl, 'anvil_dropTransaction', [first.body.txHash])
    } finally {
      await rpc(chain.rpcUrl, 'evm_setAutomine', [true])
    }
  })
})

describe('a node that fails to answer at sign time, and one that refuses', () => {
  const rpcError = (code: number, message: string) => (call: { id: unknown }) => ({ jsonrpc: '2.0', id: call.id, error: { code, message } })

  it('eth_estimateGas failing (an internal error) is 502 rpc_error, nothing is signed, and the retry is sent', async () => {
    const a = transfer(5_555_551)
    const failing = rpcError(-32603, 'internal error')
    node.answer((call) => (call.method === 'eth_estimateGas' ? failing(call) : undefined))
    const failed = await stack.post('/v1/tx/sign-and-send', { intent: a })
    node.answer(undefined)
    // Before: 403 signing_failed "the transaction would fail on chain", which a client reads as final.
    expect(failed.status, JSON.stringify(failed.body)).toBe(502)
    expect(failed.body).toEqual({ error: 'rpc_error', message: expect.stringMatching(/^chain 8453: .*internal error/) })
    expect((await sentToBob()).some((t) => t.value === 5_555_551n)).toBe(false)
    const events = (await stack.get('/v1/approvals/history?limit=100')).body.events.filter((e: { intentId: string }) => e.intentId === a.id)
    expect(events.map((e: { event: string }) => e.event)).not.toContain('signing_denied')
    const retry = await stack.post('/v1/tx/sign-and-send', { intent: a })
    expect(retry.status, JSON.stringify(retry.body)).toBe(200)
    expect((await sentToBob()).filter((t) => t.value === 5_555_551n).map((t) => t.hash)).toEqual([retry.body.txHash])
  })

  it('eth_estimateGas saying the transaction reverts is still 403 signing_failed, and nothing is signed', async () => {
    const a = transfer(5_555_552)
    const reverting = rpcError(3, 'execution reverted: paused')
    node.answer((call) => (call.method === 'eth_estimateGas' ? reverting(call) : undefined))
    const refused = await stack.post('/v1/tx/sign-and-send', { intent: a })
    node.answer(undefined)
    expect(refused.status, JSON.stringify(refused.body)).toBe(403)
    expect(refused.body).toEqual({ error: 'signing_failed', message: expect.stringMatching(/^the transaction would fail on chain 8453: .*paused/) })
    expect((await sentToBob()).some((t) => t.value === 5_555_552n)).toBe(false)
  })

  it('a preflight on a node without eth_simulateV1 whose eth_call fails is 502, not a reverted simulation; a revert stays a failed simulation', async () => {
    const a = transfer(5_555_553)
    const unsupported = rpcError(-32601, 'the method eth_simulateV1 does not exist/is not available')
    const failing = rpcError(-32603, 'internal error')
    node.answer((call) => (call.method === 'eth_simulateV1' ? unsupported(call) : call.method === 'eth_call' ? failing(call) : undefined))
    const failed = await stack.post('/v1/tx/preflight', a)
    const reverting = rpcError(3, 'execution reverted')
    node.answer((call) => (call.method === 'eth_simulateV1' ? unsupported(call) : call.method === 'eth_call' ? reverting(call) : undefined))
    const reverted = await stack.post('/v1/tx/preflight', { ...a, id: crypto.randomUUID() })
    node.answer(undefined)
    // Before: 200 with simulationSuccess false and a revert's risk score, for a node that did not answer.
    expect(failed.status, JSON.stringify(failed.body)).toBe(502)
    expect(failed.body).toEqual({ error: 'rpc_error', message: expect.stringMatching(/^chain 8453: .*internal error/) })
    expect(reverted.status, JSON.stringify(reverted.body)).toBe(200)
    expect(reverted.body.simulationSuccess).toBe(false)
  })
})
