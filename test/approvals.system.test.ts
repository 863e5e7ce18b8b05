// Issue 12 end to end: approvals that only an operator can grant, for exactly
// what the operator saw. Real signer, approver and gateway processes on a
// real anvil chain.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseEther, type Address } from 'viem'
import type { TxIntent } from '@countersign/shared'
import { anvilAccounts, startAnvil, type Anvil } from './support/anvil.js'
import { waitFor } from './support/processes.js'
import { importKey, Stack } from './support/stack.js'
import { nativeIntent } from './support/intents.js'

let anvil: Anvil

interface PendingEntry {
  requestId: string
  summary: { intentId: string; txRequestHash: string; action: string }
}

async function pendingFor(stack: Stack, intent: TxIntent, timeoutMs = 10_000): Promise<PendingEntry> {
  return waitFor(
    async () => ((await stack.get('/v1/approvals/pending')).body.pending as PendingEntry[]).find((p) => p.summary.intentId === intent.id) ?? null,
    { timeoutMs, what: 'the request to appear in the pending list' },
  )
}

beforeAll(async () => {
  anvil = await startAnvil({ chainId: 8453 })
})
afterAll(async () => {
  await anvil?.stop()
})

describe('approval token binding', () => {
  let stack: Stack
  const wallet = { address: anvilAccounts[4].address as Address }
  beforeAll(async () => {
    stack = new Stack({ rpcUrls: { 8453: anvil.rpcUrl }, policy: { maxTxPerHour: 1000 } })
    await importKey(stack.dataDir, anvilAccounts[4].privateKey)
    await stack.start({ approver: true })
  })
  afterAll(() => stack?.stop())

  it('a token read from the public history cannot sign another intent; the victim still signs; the same intent again returns the same transaction', async () => {
    const victim = nativeIntent(parseEther('0.3').toString(), { wallet })
    const asked = stack.post('/v1/tx/approve-request', victim)
    const p = await pendingFor(stack, victim)
    expect((await stack.decide(p.requestId, true)).status).toBe(200)
    const approved = await asked
    expect(approved.status).toBe(200)

    // The attacker: reads the fresh token id from the public history…
    const history = (await stack.get('/v1/approvals/history?limit=50')).body.events as Array<{ event: string; intentId: string; data: { tokenId?: string } }>
    const stolen = history.find((e) => e.event === 'approval_granted' && e.intentId === victim.id)!.data.tokenId!
    expect(stolen).toBe(approved.body.approvalTokenId)
    // …and spends it on its own intent: same transfer, new id, gas cap raised 900×, fast.
    const own: TxIntent = {
      ...victim,
      id: randomUUID(),
      constraints: { ...victim.constraints, maxGasWei: (BigInt(victim.constraints.maxGasWei) * 900n).toString() },
      preferences: { speed: 'fast' },
    }
    const theft = await stack.post('/v1/tx/sign-and-send', { intent: own, approvalTokenId: stolen })
    expect(theft.status).toBe(403)
    expect(theft.body.error).toBe('invalid_approval_token')
    // The victim's intent id with one edited field is another intent too.
    const edited = await stack.post('/v1/tx/sign-and-send', { intent: { ...victim, preferences: { speed: 'fast' } }, approvalTokenId: stolen })
    expect(edited.status).toBe(403)
    expect(edited.body.error).toBe('invalid_approval_token')

    // The victim's own sign-and-send still succeeds with its token.
    const sent = await stack.post('/v1/tx/sign-and-send', { intent: victim, approvalTokenId: approved.body.approvalTokenId })
    expect(sent.status).toBe(200)
    expect(sent.body.broadcast).toBe(true)

    // A second caller with the exact approved intent and the token: the same signed transaction, nothing new signed.
    const second = await stack.post('/v1/tx/sign-and-send', { intent: victim, approvalTokenId: stolen })
    expect(second.status).toBe(200)
    expect(second.body.signedTx).toBe(sent.body.signedTx)
    expect(second.body.txHash).toBe(sent.body.txHash)

    const events = ((await stack.get('/v1/approvals/history?limit=100')).body.events as Array<{ event: string; intentId: string; data: { reason?: string } }>)
    expect(events.filter((e) => e.event === 'signature_created' && (e.intentId === victim.id || e.intentId === own.id))).toHaveLength(1)
    expect(events.find((e) => e.event === 'signing_denied' && e.intentId === own.id)?.data.reason).toBe('invalid_approval_token')
  })
})
