// @countersign/client against the real three processes on anvil: the wait
// for an operator through short approve-request attempts that attach to the
// one pending request, and the service's errors as typed classes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseEther, type Address } from 'viem'
import {
  ApprovalDeclinedError,
  CountersignClient,
  IntentConflictError,
  NoRpcClientError,
  NotFoundError,
  PolicyDeniedError,
  ValidationError,
  transfer,
  transferNative,
  type PendingInfo,
} from '@countersign/client'
import { anvilAccounts, rpc, startAnvil, type Anvil } from './support/anvil.js'
import { deployTestToken } from './support/contracts.js'
import { waitFor } from './support/processes.js'
import { BOB } from './support/intents.js'
import { importKey, Stack } from './support/stack.js'

const owner = anvilAccounts[0]
const WALLET = owner.address as Address
let anvil: Anvil
let stack: Stack
let client: CountersignClient
let token: Address

beforeAll(async () => {
  anvil = await startAnvil({ chainId: 8453 })
  token = await deployTestToken({ rpcUrl: anvil.rpcUrl, chainId: 8453, deployerKey: owner.privateKey, name: 'Test USD', symbol: 'TUSD', decimals: 6, supply: 10n ** 12n })
  stack = new Stack({ rpcUrls: { 8453: anvil.rpcUrl }, policy: { maxTxPerHour: 1000, tokenLimits: { [token]: { maxAmount: '1000' } } } })
  await importKey(stack.dataDir, owner.privateKey)
  await stack.start({ approver: true })
  client = new CountersignClient({ url: stack.url })
}, 120_000)

afterAll(async () => {
  await stack?.stop()
  await anvil?.stop()
})

describe('approveAndSend', () => {
  it('waits through many short attempts, all attached to one pending request, and sends once approved', async () => {
    const reports: PendingInfo[] = []
    const intent = transferNative({ wallet: WALLET, to: BOB, amount: parseEther('0.01') })
    const before = BigInt(await rpc<string>(anvil.rpcUrl, 'eth_getBalance', [BOB, 'latest']))
    const sending = client.approveAndSend(intent, { attemptMs: 1_500, pendingPollMs: 500, onPending: (p) => void reports.push(p) })

    // The operator decides after several attempts have come and gone.
    await waitFor(() => reports.some((r) => r.attempt >= 4), { timeoutMs: 20_000, what: 'a fourth attempt' })
    const requestIds = new Set(reports.map((r) => r.requestId))
    expect(requestIds.size).toBe(1)
    const [requestId] = requestIds
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/)
    expect((await stack.get('/v1/approvals/pending')).body.pending.filter((p: { summary: { intentId: string } }) => p.summary.intentId === intent.id)).toHaveLength(1)
    expect((await stack.decide(requestId!, true)).status).toBe(200)

    const { approval, sent, receipt } = await sending
    expect(approval).toMatchObject({ intentId: intent.id, approved: true, approvalRequired: true, approvalTokenId: expect.any(String) })
    expect(sent.broadcast).toBe(true)
    expect(receipt).toMatchObject({ txHash: sent.txHash, status: 'success' })
    expect(BigInt(await rpc<string>(anvil.rpcUrl, 'eth_getBalance', [BOB, 'latest']))).toBe(before + parseEther('0.01'))
    expect(reports.at(-1)!.summary?.action).toContain('Transfer 0.01 ETH')
  }, 60_000)

  it('an allowed intent needs no operator: no pending report, no token', async () => {
    const reports: PendingInfo[] = []
    const { approval, receipt } = await client.approveAndSend(transfer({ wallet: WALLET, token, to: BOB, amount: 5n }), { onPending: (p) => void reports.push(p) })
    expect(approval.approvalRequired).toBe(false)
    expect(approval.approvalTokenId).toBeUndefined()
    expect(receipt.status).toBe('success')
    expect(reports).toEqual([])
  })

  it('a decline rejects with ApprovalDeclinedError carrying the decline body', async () => {
    const intent = transferNative({ wallet: WALLET, to: BOB, amount: 7n })
    let requestId: string | undefined
    const sending = client.approveAndSend(intent, { pendingPollMs: 300, onPending: (p) => void (requestId ??= p.requestId) }).catch((e: unknown) => e)
    await waitFor(() => requestId, { timeoutMs: 10_000, what: 'the pending report' })
    await stack.decide(requestId!, false)
    const err = (await sending) as ApprovalDeclinedError
    expect(err).toBeInstanceOf(ApprovalDeclinedError)
    expect(err.status).toBe(403)
    expect(err.intentId).toBe(intent.id)
    expect(err.body).toMatchObject({ approved: false, reason: 'user_declined', approvalRequired: true })
    expect(err.reasons.length).toBeGreaterThan(0)
  })
})

describe('the service\'s errors, typed', () => {
  it('policy denial: PolicyDeniedError with the reasons', async () => {
    const err = await client.approveAndSend(transfer({ wallet: WALLET, token, to: BOB, amount: 5000n })).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(PolicyDeniedError)
    expect((err as PolicyDeniedError).reasons.join(' ')).toContain('1000')
  })

  it('no RPC for the chain, a pending receipt, a bad body, an intent id reused for another body', async () => {
    await expect(client.balance('native', WALLET, { chainId: 10 })).rejects.toBeInstanceOf(NoRpcClientError)
    await expect(client.receipt('0x' + '12'.repeat(32))).rejects.toBeInstanceOf(NotFoundError)
    expect(await client.txStatus('0x' + '12'.repeat(32))).toEqual({ state: 'pending' })
    const bad = await client.build({ ...transferNative({ wallet: WALLET, to: BOB, amount: 1n }), version: '2' as '1' }).catch((e: unknown) => e)
    expect(bad).toBeInstanceOf(ValidationError)
    expect((bad as ValidationError).message).toMatch(/version/)

    const first = transferNative({ wallet: WALLET, to: BOB, amount: 11n })
    const waiting = client.approveRequest(first, { timeoutMs: 1_000 }).catch(() => undefined)
    await waitFor(async () => (await client.pendingFor(first.id)) ?? null, { timeoutMs: 10_000, what: 'the first request pending' })
    await waiting
    const conflict = await client.approveRequest({ ...first, action: { ...first.action, amount: '12' } as typeof first.action }, { timeoutMs: 5_000 }).catch((e: unknown) => e)
    expect(conflict).toBeInstanceOf(IntentConflictError)
    expect((conflict as IntentConflictError).status).toBe(409)
  })
})
