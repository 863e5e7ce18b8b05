// On Optimism and Base every transaction also pays an L1 data fee, taken
// from the wallet beside gas × gas price (often most of a transfer's cost on
// Base). Found by review: constraints.maxGasWei and policy maxGasCostWei
// counted gas × max fee only, so a transaction whose whole fee was above the
// intent's ceiling was signed. anvil (run with Base's chain id) has no
// GasPriceOracle predeploy; here one is put at its address that asks a fixed
// fee, as the real one answers getL1Fee(bytes) with a fee in wei.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { decodeFunctionData, parseEther, parseTransaction, type Address, type Hex } from 'viem'
import { anvilAccounts, rpc, startAnvil, type Anvil } from './support/anvil.js'
import { BOB, intentFor } from './support/intents.js'
import { startRpcProxy, type RpcAnswer, type RpcProxy } from './support/rpcProxy.js'
import { importKey, Stack } from './support/stack.js'

const ORACLE = '0x420000000000000000000000000000000000000F'
const L1_FEE = 10n ** 15n // 0.001 ETH
// PUSH7 L1_FEE, PUSH1 0, MSTORE, PUSH1 32, PUSH1 0, RETURN: answers every call with L1_FEE as a uint256.
const FIXED_FEE_ORACLE = `0x66${L1_FEE.toString(16).padStart(14, '0')}60005260206000f3`
const GET_L1_FEE = [{ type: 'function', name: 'getL1Fee', stateMutability: 'view', inputs: [{ name: '_data', type: 'bytes' }], outputs: [{ name: '', type: 'uint256' }] }] as const

const owner = anvilAccounts[3]!
const WALLET = owner.address as Address
let anvil: Anvil
let node: RpcProxy
let stack: Stack
const askedOracle: Hex[] = []

/** Records what the oracle is asked; anvil answers. */
const defaultRule: RpcAnswer = (call) => {
  if (call.method === 'eth_call' && String(call.params[0]?.to).toLowerCase() === ORACLE.toLowerCase()) askedOracle.push((call.params[0].data ?? call.params[0].input) as Hex)
  return undefined
}

const balanceOf = async (a: string) => BigInt(await rpc<string>(anvil.rpcUrl, 'eth_getBalance', [a, 'latest']))

beforeAll(async () => {
  anvil = await startAnvil({ chainId: 8453 })
  await rpc(anvil.rpcUrl, 'anvil_setCode', [ORACLE, FIXED_FEE_ORACLE])
  node = await startRpcProxy(anvil.rpcUrl, defaultRule)
  stack = new Stack({ rpcUrls: { 8453: node.url }, policy: { maxTxPerHour: 1000, requireApprovalAbove: { valueWei: parseEther('1000').toString() } } })
  await importKey(stack.dataDir, owner.privateKey)
  await stack.start()
}, 120_000)

afterAll(async () => {
  await stack?.stop()
  node?.server.close()
  await anvil?.stop()
})

describe("an OP-stack chain's L1 data fee", () => {
  it('is in the preflight gas cost, read for the transaction itself', async () => {
    askedOracle.length = 0
    const intent = intentFor(WALLET, { type: 'transfer_native', to: BOB, amount: '1234567' })
    const pre = await stack.post('/v1/tx/preflight', intent)
    expect(pre.status, JSON.stringify(pre.body)).toBe(200)
    const cost = pre.body.gasCost
    expect(cost.l1FeeWei).toBe(L1_FEE.toString())
    expect(BigInt(cost.costWei)).toBe(BigInt(cost.gas) * BigInt(cost.maxFeePerGas) + L1_FEE)
    // The oracle was asked with this transaction, unsigned, on this chain.
    expect(askedOracle).toHaveLength(1)
    const { functionName, args } = decodeFunctionData({ abi: GET_L1_FEE, data: askedOracle[0]! })
    expect(functionName).toBe('getL1Fee')
    const tx = parseTransaction(args[0])
    expect(tx).toMatchObject({ type: 'eip1559', chainId: 8453, to: BOB.toLowerCase(), value: 1234567n })
    expect(tx.r).toBeUndefined()
  })

  it('counts against constraints.maxGasWei: a transfer whose gas fits and whose whole fee does not is refused, at approve-request and at sign-and-send, and nothing leaves the wallet', async () => {
    const pre = await stack.post('/v1/tx/preflight', intentFor(WALLET, { type: 'transfer_native', to: BOB, amount: '2345678' }))
    const l2Cost = BigInt(pre.body.gasCost.gas) * BigInt(pre.body.gasCost.maxFeePerGas)
    // Twice the gas part, far below gas + L1 fee: before, this was signed and sent.
    const ceiling = (2n * l2Cost).toString()
    expect(2n * l2Cost < l2Cost + L1_FEE).toBe(true)
    const before = await balanceOf(WALLET)
    const intent = intentFor(WALLET, { type: 'transfer_native', to: BOB, amount: '2345678' }, { maxGasWei: ceiling })

    const sent = await stack.post('/v1/tx/sign-and-send', { intent })
    expect(sent.status, JSON.stringify(sent.body)).toBe(403)
    expect(sent.body.error).toBe('policy_denied')
    expect(sent.body.reasons).toEqual([expect.stringMatching(new RegExp(`^gas cost \\d+ wei \\(gas \\d+ at max fee \\d+ wei, plus an L1 data fee of ${L1_FEE} wei\\) exceeds constraints.maxGasWei ${ceiling}$`))])

    const asked = await stack.post('/v1/tx/approve-request', { ...intent, id: crypto.randomUUID() })
    expect(asked.status, JSON.stringify(asked.body)).toBe(403)
    expect(asked.body.reasons).toEqual([expect.stringMatching(new RegExp(`^estimated gas cost \\d+ wei \\(gas \\d+ at max fee \\d+ wei, plus an L1 data fee of ${L1_FEE} wei\\) exceeds constraints.maxGasWei ${ceiling} wei$`))])
    expect(await balanceOf(WALLET)).toBe(before)

    const events = (await stack.get('/v1/approvals/history?limit=100')).body.events.filter((e: { intentId: string }) => e.intentId === intent.id)
    expect(events).toContainEqual(expect.objectContaining({ event: 'signing_denied', data: expect.objectContaining({ reason: 'gas_cost_exceeds_max', l1FeeWei: L1_FEE.toString() }) }))
  })

  it("an oracle that cannot be read leaves the gas part checked: approve-request still refuses a cost above maxGasWei, and the preflight says the L1 fee is unread", async () => {
    // Found by review: a failed oracle read made gasCost null, which took the whole check (and its warning) away.
    node.answer((call) =>
      call.method === 'eth_call' && String(call.params[0]?.to).toLowerCase() === ORACLE.toLowerCase() ? { jsonrpc: '2.0', id: call.id, error: { code: -32603, message: 'internal error' } } : undefined,
    )
    try {
      const intent = intentFor(WALLET, { type: 'transfer_native', to: BOB, amount: '4567891' }, { maxGasWei: '1' })
      const pre = await stack.post('/v1/tx/preflight', intent)
      expect(pre.status, JSON.stringify(pre.body)).toBe(200)
      expect(pre.body.gasCost).toMatchObject({ l1FeeWei: null, withinLimit: false })
      expect(BigInt(pre.body.gasCost.costWei)).toBe(BigInt(pre.body.gasCost.gas) * BigInt(pre.body.gasCost.maxFeePerGas))
      expect(pre.body.signals.map((s: { id: string }) => s.id)).toEqual(expect.arrayContaining(['gas_cost_exceeds_max', 'l1_fee_unknown']))
      const asked = await stack.post('/v1/tx/approve-request', { ...intent, id: crypto.randomUUID() })
      expect(asked.status, JSON.stringify(asked.body)).toBe(403)
      expect(asked.body.reasons).toEqual([expect.stringMatching(/^estimated gas cost \d+ wei \(gas \d+ at max fee \d+ wei, the L1 data fee unread\) exceeds constraints.maxGasWei 1 wei$/)])
    } finally {
      node.answer(defaultRule)
    }
  })

  it('counts against the policy maxGasCostWei too, and a ceiling above the whole fee lets the transfer through', async () => {
    const thrifty = new Stack({ rpcUrls: { 8453: node.url }, policy: { maxTxPerHour: 1000, requireApprovalAbove: { valueWei: parseEther('1000').toString() }, maxGasCostWei: (L1_FEE / 2n).toString() } })
    await importKey(thrifty.dataDir, owner.privateKey)
    await thrifty.start()
    try {
      const intent = intentFor(WALLET, { type: 'transfer_native', to: BOB, amount: '3456789' }, { maxGasWei: parseEther('0.01').toString() })
      const refused = await thrifty.post('/v1/tx/sign-and-send', { intent })
      expect(refused.status, JSON.stringify(refused.body)).toBe(403)
      expect(refused.body.reasons, JSON.stringify(refused.body)).toEqual([expect.stringMatching(new RegExp(`exceeds the policy's maxGasCostWei of ${L1_FEE / 2n} wei$`))])
    } finally {
      await thrifty.stop()
    }
    const intent = intentFor(WALLET, { type: 'transfer_native', to: BOB, amount: '3456789' }, { maxGasWei: parseEther('0.01').toString() })
    const bobBefore = await balanceOf(BOB)
    const sent = await stack.post('/v1/tx/sign-and-send', { intent })
    expect(sent.status, JSON.stringify(sent.body)).toBe(200)
    expect(await balanceOf(BOB)).toBe(bobBefore + 3456789n)
  })
})
