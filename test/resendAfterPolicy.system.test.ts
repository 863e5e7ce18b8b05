// A transaction signed before and never mined is not sent again once policy
// denies its intent, on the real three processes and a real anvil chain.
// Before: an intent whose broadcast failed was re-broadcast by a retry of
// sign-and-send after the operator had taken its recipient off the allowlist
// (sign-and-send answered retries from gateway.db before asking policy), so
// the payment policy now refuses was made anyway.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Address, Hex } from 'viem'
import { anvilAccounts, rpc, startAnvil, type Anvil } from './support/anvil.js'
import { deployTestToken, erc20Allowance } from './support/contracts.js'
import { intentFor } from './support/intents.js'
import { startRpcProxy, type RpcProxy } from './support/rpcProxy.js'
import { importKey, Stack, writePolicy } from './support/stack.js'

const owner = anvilAccounts[0]
const WALLET = owner.address as Address
const FRIEND = '0x000000000000000000000000000000000000f00d' as Address
const ELSEWHERE = '0x000000000000000000000000000000000000beef' as Address
const AMOUNT = 12_345n
/** Transfers need no operator here: the test is about policy's own rules. */
const allowing = { maxTxPerHour: 1000, requireApprovalAbove: { valueWei: '1000000000000000000' } }

let anvil: Anvil
let token: Address
/** Between the gateway and anvil: refuses eth_sendRawTransaction while `sendsFail`, as a node that is down for sends would. */
let proxy: RpcProxy
let sendsFail = true
let sends = 0
let stack: Stack

const balanceOf = async (who: Address) => BigInt(await rpc<string>(anvil.rpcUrl, 'eth_getBalance', [who, 'latest']))

async function restartGatewayWith(policy: Record<string, unknown>): Promise<void> {
  await stack.gateway.stop()
  writePolicy(stack.dataDir, policy)
  await stack.startGateway()
}

beforeAll(async () => {
  anvil = await startAnvil({ chainId: 8453 })
  token = await deployTestToken({ rpcUrl: anvil.rpcUrl, chainId: 8453, deployerKey: owner.privateKey, name: 'Other', symbol: 'OTH', decimals: 6, supply: 1_000_000_000_000n })
  proxy = await startRpcProxy(anvil.rpcUrl, (call) => {
    if (call.method !== 'eth_sendRawTransaction') return undefined
    sends += 1
    return sendsFail ? { jsonrpc: '2.0', id: call.id, error: { code: -32000, message: 'node is not taking transactions now' } } : undefined
  })
  stack = new Stack({ rpcUrls: { 8453: proxy.url }, policy: allowing })
  await importKey(stack.dataDir, owner.privateKey)
  await stack.start()
}, 120_000)

afterAll(async () => {
  await stack?.stop()
  proxy?.server.close()
  await anvil?.stop()
})

describe('a retry of an intent whose broadcast failed', () => {
  it('is not sent once its recipient is off the allowlist, and is sent when policy allows it again', async () => {
    const intent = intentFor(WALLET, { type: 'transfer_native', to: FRIEND, amount: AMOUNT.toString() })
    const first = await stack.post('/v1/tx/sign-and-send', { intent })
    expect(first.status, JSON.stringify(first.body)).toBe(200)
    expect(first.body).toMatchObject({ broadcast: false })
    const txHash = first.body.txHash as Hex
    const before = await balanceOf(FRIEND)

    // The operator takes the recipient off the allowlist; the node takes transactions again.
    await restartGatewayWith({ ...allowing, recipientAllowlist: [ELSEWHERE] })
    sendsFail = false
    sends = 0
    const retry = await stack.post('/v1/tx/sign-and-send', { intent })
    expect(retry.status, JSON.stringify(retry.body)).toBe(403)
    expect(retry.body.error).toBe('policy_denied')
    expect(retry.body.reasons[0]).toMatch(/recipient .* is not in the recipient allowlist/i)
    expect(retry.body.reasons.at(-1)).toMatch(new RegExp(`^transaction ${txHash} \\(nonce \\d+\\), signed before policy denied this intent and not mined, is not sent again`))
    expect(sends).toBe(0)
    expect(await rpc(anvil.rpcUrl, 'eth_getTransactionByHash', [txHash])).toBeNull()
    expect(await balanceOf(FRIEND)).toBe(before)
    const events = (await stack.get('/v1/approvals/history?limit=20')).body.events as Array<{ event: string; intentId: string; data: Record<string, unknown> }>
    expect(events.filter((e) => e.intentId === intent.id && e.event === 'signing_denied').map((e) => e.data)).toEqual([expect.objectContaining({ reason: 'policy_deny', txHash })])

    // Policy allows it again: the same transaction goes out, nothing new is signed.
    await restartGatewayWith(allowing)
    const allowed = await stack.post('/v1/tx/sign-and-send', { intent })
    expect(allowed.status, JSON.stringify(allowed.body)).toBe(200)
    expect(allowed.body).toMatchObject({ txHash, broadcast: true })
    expect(sends).toBe(1)
    expect(await balanceOf(FRIEND)).toBe(before + AMOUNT)
  }, 120_000)

  // The hourly window and the risk ceiling belong to the decision made when the intent was signed: a re-send
  // is not judged by them again (PolicyGate.reconsider), and approve-request says so instead of a 403 that
  // sign-and-send would then contradict.
  it('is sent again when only the risk ceiling was lowered since, and approve-request answers it as signed before, naming the denial', async () => {
    const lenient = { ...allowing, unlimitedApprovals: 'allow', maxRiskScore: 100 }
    await restartGatewayWith(lenient)
    sendsFail = true
    const unlimited = (1n << 256n) - 1n
    const intent = intentFor(WALLET, { type: 'approve', asset: { kind: 'erc20', address: token, symbol: 'OTH', decimals: 6 }, spender: FRIEND, amount: unlimited.toString() })
    // The signer, started under the first policy, asks an operator for any unlimited approval: one grants it.
    const approvalTokenId = await stack.grant(intent)
    const first = await stack.post('/v1/tx/sign-and-send', { intent, approvalTokenId })
    expect(first.status, JSON.stringify(first.body)).toBe(200)
    expect(first.body).toMatchObject({ broadcast: false })

    await restartGatewayWith({ ...lenient, maxRiskScore: 20 })
    sendsFail = false
    sends = 0
    const asked = await stack.post('/v1/tx/approve-request', intent)
    expect(asked.status, JSON.stringify(asked.body)).toBe(200)
    expect(asked.body).toMatchObject({ approved: true, approvalRequired: false, policyDecision: { decision: 'deny', reasons: [expect.stringMatching(/^risk score \d+ exceeds the maximum of 20$/)] } })
    expect(asked.body.warnings).toContainEqual(expect.stringMatching(/^policy would deny this intent now \(risk score \d+ exceeds the maximum of 20\)/))
    const retry = await stack.post('/v1/tx/sign-and-send', { intent })
    expect(retry.status, JSON.stringify(retry.body)).toBe(200)
    expect(retry.body).toMatchObject({ txHash: first.body.txHash, broadcast: true })
    expect(sends).toBe(1)
    expect(await erc20Allowance(anvil.rpcUrl, token, WALLET, FRIEND)).toBe(unlimited)
  }, 120_000)
})
