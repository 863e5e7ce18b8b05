// Issue 12 end to end: approvals that only an operator can grant, for exactly
// what the operator saw. Real signer, approver and gateway processes on a
// real anvil chain.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseEther, type Address } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import WebSocket from 'ws'
import type { TxIntent } from '@countersign/shared'
import { anvilAccounts, startAnvil, type Anvil } from './support/anvil.js'
import { waitFor } from './support/processes.js'
import { addFastKeys, importKey, Stack } from './support/stack.js'
import { BOB, nativeIntent } from './support/intents.js'

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
    // The victim's intent id with one edited field is another intent too: the gateway refuses it before the signer sees it
    // (the victim's request holds the id for the victim's intent), and the token would not fit it anyway.
    const edited = await stack.post('/v1/tx/sign-and-send', { intent: { ...victim, preferences: { speed: 'fast' } }, approvalTokenId: stolen })
    expect(edited.status).toBe(409)
    expect(edited.body.error).toBe('intent_conflict')

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

describe('a waiting request holds its intent id', () => {
  let stack: Stack
  const wallet = { address: anvilAccounts[2].address as Address }
  beforeAll(async () => {
    stack = new Stack({ rpcUrls: { 8453: anvil.rpcUrl }, policy: { maxTxPerHour: 1000 } })
    await importKey(stack.dataDir, anvilAccounts[2].privateKey)
    await stack.start({ approver: true })
  })
  afterAll(() => stack?.stop())

  it('an attacker who reads a pending intent id cannot sign a 0 amount under it; the approved intent is signed and mined, also after a gateway restart', async () => {
    const victim = nativeIntent(parseEther('0.01').toString(), { wallet })
    // This call does not outlive the gateway restart below (a 503, or the connection closed); the victim asks again after it.
    const asked = stack.post('/v1/tx/approve-request', victim).catch(() => null)
    // The attacker reads the id from the public pending list and sends the same id and wallet with amount 0, which policy allows without approval.
    const p = await pendingFor(stack, victim)
    const zero: TxIntent = { ...victim, id: p.summary.intentId, action: { type: 'transfer_native', to: BOB, amount: '0' } }
    const attack = await stack.post('/v1/tx/sign-and-send', { intent: zero })
    expect(attack.status).toBe(409)
    expect(attack.body).toEqual({ error: 'intent_conflict', message: expect.stringContaining(victim.id) })
    expect((await stack.post('/v1/tx/build', zero)).status).toBe(409)

    // A gateway restart keeps the hold (gateway.db).
    await stack.gateway.stop()
    await stack.startGateway()
    expect((await stack.post('/v1/tx/sign-and-send', { intent: zero })).status).toBe(409)

    // The operator approves; the victim (asking again after the restart, as a client does) gets the token, signs and the transfer is mined.
    expect((await stack.decide(p.requestId, true)).status).toBe(200)
    await asked
    const approved = await stack.post('/v1/tx/approve-request', victim)
    expect(approved.body).toMatchObject({ approved: true, approvalRequired: true })
    const sent = await stack.post('/v1/tx/sign-and-send', { intent: victim, approvalTokenId: approved.body.approvalTokenId })
    expect(sent.status).toBe(200)
    expect(sent.body.broadcast).toBe(true)
    await waitFor(async () => ((await stack.get(`/v1/tx/${sent.body.txHash}`)).status === 200) || null, { what: 'the receipt' })

    // Nothing was ever signed for the 0 amount.
    const events = (await stack.get('/v1/approvals/history?limit=100')).body.events as Array<{ event: string; intentId: string; data: { txHash?: string } }>
    expect(events.filter((e) => e.event === 'signature_created' && e.intentId === victim.id).map((e) => e.data.txHash)).toEqual([sent.body.txHash])
  })
})

describe('pending requests: one per intent, kept decisions', () => {
  let stack: Stack
  const wallet = { address: anvilAccounts[3].address as Address }
  beforeAll(async () => {
    stack = new Stack({ rpcUrls: { 8453: anvil.rpcUrl }, policy: { maxTxPerHour: 1000 } })
    await importKey(stack.dataDir, anvilAccounts[3].privateKey)
    await stack.start({ approver: true })
  })
  afterAll(() => stack?.stop())

  it('a client that disconnects after 2 s and retries after the operator approved gets the token at once', async () => {
    const intent = nativeIntent(parseEther('0.2').toString(), { wallet })
    const ac = new AbortController()
    const first = fetch(`${stack.url}/v1/tx/approve-request`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(intent), signal: ac.signal }).catch(() => 'gave up')
    const p = await pendingFor(stack, intent)
    await new Promise((r) => setTimeout(r, 2000))
    ac.abort()
    expect(await first).toBe('gave up')
    // Still on the dashboard; the operator approves while nobody waits.
    expect(((await stack.get('/v1/approvals/pending')).body.pending as PendingEntry[]).map((x) => x.requestId)).toContain(p.requestId)
    expect((await stack.decide(p.requestId, true)).status).toBe(200)
    const started = Date.now()
    const retry = await stack.post('/v1/tx/approve-request', intent)
    expect(Date.now() - started).toBeLessThan(1500)
    expect(retry.status).toBe(200)
    expect(retry.body).toMatchObject({ approved: true, approvalRequired: true, approvalTokenId: expect.stringMatching(/^[0-9a-f-]{36}$/) })
    const sent = await stack.post('/v1/tx/sign-and-send', { intent, approvalTokenId: retry.body.approvalTokenId })
    expect(sent.status).toBe(200)
    const events = ((await stack.get('/v1/approvals/history?limit=100')).body.events as Array<{ event: string; intentId: string }>).filter((e) => e.intentId === intent.id).map((e) => e.event)
    expect(events.filter((e) => e === 'approval_requested')).toHaveLength(1)
    expect(events.filter((e) => e === 'approval_granted')).toHaveLength(1)
    expect(events).not.toContain('approval_withdrawn')
  })

  it('15 concurrent approve-requests of one intent make one card and all get the same decision; another body under that id is 409 intent_conflict', async () => {
    const intent = nativeIntent(parseEther('0.1').toString(), { wallet })
    const asks = Array.from({ length: 15 }, () => stack.post('/v1/tx/approve-request', intent))
    const p = await pendingFor(stack, intent)
    await new Promise((r) => setTimeout(r, 500))
    expect(((await stack.get('/v1/approvals/pending')).body.pending as PendingEntry[]).filter((x) => x.summary.intentId === intent.id)).toHaveLength(1)
    const conflict = await stack.post('/v1/tx/approve-request', { ...intent, constraints: { ...intent.constraints, maxGasWei: parseEther('9').toString() } })
    expect(conflict.status).toBe(409)
    expect(conflict.body).toMatchObject({ error: 'intent_conflict', message: expect.stringContaining(intent.id) })
    expect((await stack.decide(p.requestId, true)).status).toBe(200)
    const answers = await Promise.all(asks)
    expect(answers.map((a) => a.status)).toEqual(Array(15).fill(200))
    expect(new Set(answers.map((a) => a.body.approvalTokenId)).size).toBe(1)
  })
})

describe('flooding cannot freeze approvals', () => {
  const TTL_MS = 45_000
  let stack: Stack
  /** Wallets the signer holds keys for: only such wallets get a request, so the caps are tried with them. */
  let held: Address[]
  beforeAll(async () => {
    stack = new Stack({ rpcUrls: { 8453: anvil.rpcUrl }, policy: { maxTxPerHour: 1000, maxRiskScore: 100 }, env: { SERVICE_APPROVAL_TTL_MS: String(TTL_MS) } })
    held = await addFastKeys(stack.dataDir, 142)
    await stack.start({ approver: true })
  })
  afterAll(() => stack?.stop())

  const ask = (address: Address) => stack.post('/v1/tx/approve-request', nativeIntent('1000', { wallet: { address } }))
  const freshWallet = () => privateKeyToAccount(generatePrivateKey()).address

  it('500 approve-requests of 1 wei for 100 wallets the signer holds no key for are refused before the approver (they once filled all 500 pending places for 300 s); a held wallet is still asked', async () => {
    const madeUp = Array.from({ length: 100 }, freshWallet)
    const answers = await Promise.all(madeUp.flatMap((w) => Array.from({ length: 5 }, () => stack.post('/v1/tx/approve-request', nativeIntent('1', { wallet: { address: w } })))))
    expect(answers.filter((r) => r.status !== 403)).toEqual([])
    expect(answers[0]!.body).toEqual({ error: 'policy_denied', decision: 'deny', reasons: [`the signer holds no key for wallet ${madeUp[0]}`], policyVersion: '1' })
    expect((await stack.get('/v1/approvals/pending')).body.pending).toEqual([])
    // The real wallet's request reaches the operator (it was 429 too_many_pending).
    const real = nativeIntent('1', { wallet: { address: held[141]! } })
    const waiting = stack.post('/v1/tx/approve-request', real)
    const p = await pendingFor(stack, real)
    expect((await stack.decide(p.requestId, false)).status).toBe(200)
    expect(await waiting).toMatchObject({ status: 403, body: { approved: false, reason: 'user_declined' } })
  }, 120_000)

  it('600 approve-requests from 120 held wallets: 429 beyond the caps, a fresh wallet still reaches the dashboard within 1 s, and everything expires', async () => {
    const feed = new WebSocket(`ws://127.0.0.1:${stack.port}/v1/approvals/ws`)
    const arrived = new Map<string, number>()
    feed.on('message', (m) => {
      const msg = JSON.parse(m.toString()) as { type: string; request?: PendingEntry }
      if (msg.type === 'request') arrived.set(msg.request!.summary.intentId, Date.now())
    })
    await new Promise((r, j) => {
      feed.once('open', r)
      feed.once('error', j)
    })
    feed.send(JSON.stringify({ type: 'auth', token: stack.operatorToken }))

    // 60 wallets send 7 (5 wait, 2 are refused by the per-wallet cap), 60 wallets send 3.
    const wallets = held.slice(0, 120)
    const answered: Array<{ status: number; body: any }> = []
    const flood = wallets.flatMap((w, n) => Array.from({ length: n < 60 ? 7 : 3 }, () => ask(w).then((r) => (answered.push(r), r))))
    expect(flood).toHaveLength(600)
    await waitFor(async () => (answered.filter((r) => r.status === 429).length === 120 && (await stack.get('/v1/approvals/pending')).body.pending.length === 480) || null, {
      timeoutMs: 60_000,
      what: '480 pending and 120 refused',
    })
    expect(answered).toHaveLength(120)
    expect(answered[0]!.body).toMatchObject({ error: 'too_many_pending', message: expect.stringContaining('at most 5') })

    // While 480 callers wait, a new wallet's request reaches the dashboard at once.
    const fresh = nativeIntent('1000', { wallet: { address: held[120]! } })
    const sentAt = Date.now()
    const freshAsk = stack.post('/v1/tx/approve-request', fresh)
    await waitFor(() => arrived.get(fresh.id) ?? null, { timeoutMs: 5000, what: 'the fresh request on the dashboard feed' })
    expect(arrived.get(fresh.id)! - sentAt).toBeLessThan(1000)

    // 500 in all: of 20 more wallets, 19 fit and the last is refused.
    const more = await Promise.all(held.slice(121, 141).map((address) => {
      const i = nativeIntent('1000', { wallet: { address } })
      return Promise.race([stack.post('/v1/tx/approve-request', i), new Promise<{ status: number; body: any }>((r) => setTimeout(() => r({ status: 0, body: null }), 3000))])
    }))
    expect(more.filter((r) => r.status === 429)).toHaveLength(1)
    expect(more.find((r) => r.status === 429)!.body.message).toContain('at most 500')
    expect((await stack.get('/v1/approvals/pending')).body.pending).toHaveLength(500)

    // Everything expires: every waiting caller gets approval_expired and the list empties.
    const waited = [...(await Promise.all(flood)).filter((r) => r.status !== 429), await freshAsk]
    expect(waited).toHaveLength(481)
    for (const r of waited) expect(r).toMatchObject({ status: 403, body: { approved: false, reason: 'approval_expired' } })
    await waitFor(async () => (await stack.get('/v1/approvals/pending')).body.pending.length === 0 || null, { timeoutMs: TTL_MS, what: 'the pending list to empty' })
    feed.close()
  }, 240_000)
})
