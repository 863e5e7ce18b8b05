// No approval without the operators' decision, under attack: in web mode,
// approve-request calls wait on the dashboard while a stream of fuzzed
// decide calls arrives (no token, wrong and near-miss tokens, odd bodies,
// unknown and malformed request ids, the gateway's forwarding route and the
// approver's own port), with real operators' decisions mixed in. Once with
// the single operator token; once with three named operators and a policy
// quorum of two. Every approve-request that ends approved must have had the
// accepted approvals it needs (one, or two distinct operators), every
// decline an operator's accepted denial; every decide answer is one the
// document lists. Seeded like the other fuzz tests (FUZZ_SEED, FUZZ_ROUNDS).
import { createHash, randomBytes } from 'node:crypto'
import { chmodSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { parseEther, type Address } from 'viem'
import { anvilAccounts, startAnvil, type Anvil } from './support/anvil.js'
import { responseChecker } from './support/contract.js'
import { clone, FUZZ_RECIPIENT, fuzzSettings, mutate, oddBodyText, oddPathSegment, oddValues, seededRandom } from './support/fuzz.js'
import { intentFor } from './support/intents.js'
import { waitFor } from './support/processes.js'
import { addFastKeys, importKey, Stack } from './support/stack.js'

const { seed: SEED, rounds: ROUNDS } = fuzzSettings(400)

interface Waiting {
  intentId: string
  answer: Promise<{ status: number; body: { approved?: boolean; reason?: string; approvalTokenId?: string } }>
}

interface Setup {
  /** Named operators and their tokens; empty for the single operator token. */
  operators: Record<string, string>
  /** Distinct approvals a request needs. */
  needed: number
}

const running: Array<{ stack: Stack; anvil: Anvil }> = []
afterAll(async () => {
  for (const r of running) {
    await r.stack.stop()
    await r.anvil.stop()
  }
})

/** The stack, and the wallets its signer holds keys for (requests are made only for those). */
interface Started {
  stack: Stack
  wallets: Address[]
}

async function start(setup: Setup): Promise<Started> {
  const anvil = await startAnvil({ chainId: 8453 })
  const quorum = setup.needed > 1 ? { requireQuorumAbove: { valueWei: '0', approvals: setup.needed } } : {}
  const stack = new Stack({ rpcUrls: { 8453: anvil.rpcUrl }, policy: { maxTxPerHour: 1_000_000, requireApprovalAbove: { valueWei: '0' }, ...quorum } })
  running.push({ stack, anvil })
  await importKey(stack.dataDir, anvilAccounts[0].privateKey)
  // Five requests may wait per wallet, and a round makes at most one: with a wallet per five rounds, taken in turn, that cap is never met.
  const wallets = await addFastKeys(stack.dataDir, Math.max(10, Math.ceil(ROUNDS / 5)))
  const env: Record<string, string> = { SERVICE_APPROVAL_MODE: 'web' }
  if (Object.keys(setup.operators).length > 0) {
    const file = path.join(stack.dataDir, 'operators.json')
    const sha256 = (t: string) => createHash('sha256').update(t).digest('hex')
    writeFileSync(file, JSON.stringify({ operators: Object.entries(setup.operators).map(([name, token]) => ({ name, tokenSha256: sha256(token) })) }))
    chmodSync(file, 0o600)
    env.SERVICE_OPERATORS_FILE = file
  }
  await stack.start({ approver: true, approverEnv: env })
  return { stack, wallets }
}

async function fuzzDecides({ stack, wallets }: Started, setup: Setup): Promise<void> {
  const contract = responseChecker((await fetch(`${stack.url}/v1/openapi.json`).then((r) => r.json())) as Parameters<typeof responseChecker>[0])
  const rng = seededRandom(SEED)
  const tokens = Object.keys(setup.operators).length > 0 ? setup.operators : { operator: stack.operatorToken }
  const names = Object.keys(tokens)
  const bases = [stack.url, `http://127.0.0.1:${stack.approverPort}`]
  const waiting: Waiting[] = []
  /** intentId -> the operators whose approval was accepted, and whether a denial was. */
  const votes = new Map<string, { approvedBy: Set<string>; denied: boolean }>()
  const voteOf = (intentId: string) => votes.get(intentId) ?? votes.set(intentId, { approvedBy: new Set(), denied: false }).get(intentId)!
  const problems: string[] = []
  const statuses = new Map<number, number>()

  const pending = async (): Promise<Array<{ requestId: string; summary: { intentId?: string } }>> =>
    ((await (await fetch(`${stack.url}/v1/approvals/pending`)).json()) as { pending: Array<{ requestId: string; summary: { intentId?: string } }> }).pending

  for (let round = 0; round < ROUNDS && problems.length < 20; round++) {
    if (rng.chance(0.25)) {
      // A new request, on the next of the signer's wallets (five may wait per wallet); approve-request blocks until it is decided.
      const wallet = wallets[waiting.length % wallets.length]!
      const intent = intentFor(wallet, { type: 'transfer_native', to: FUZZ_RECIPIENT, amount: parseEther('0.01').toString() })
      waiting.push({ intentId: intent.id, answer: stack.post('/v1/tx/approve-request', intent) as Waiting['answer'] })
      continue
    }
    const list = await pending()
    const target = list.length > 0 && rng.chance(0.8) ? rng.pick(list) : null
    const requestId = target ? target.requestId : rng.chance(0.5) ? crypto.randomUUID() : oddPathSegment(rng)
    const who = rng.chance(0.4) ? rng.pick(names) : null
    const some = tokens[rng.pick(names)]!
    const auth = who
      ? `Bearer ${tokens[who]}`
      : rng.pick([null, `Bearer ${some.slice(0, -1)}`, `Bearer ${some}x`, `Bearer ${some.toUpperCase()}`, some, `Basic ${Buffer.from(some).toString('base64')}`, 'Bearer ', `Bearer  ${some} extra`])
    const approved = rng.chance(0.75)
    const body = rng.chance(0.7) ? JSON.stringify({ approved }) : rng.chance(0.7) ? JSON.stringify(mutate(rng, { approved })) : rng.chance(0.5) ? oddBodyText(rng, { approved }) : JSON.stringify({ approved: clone(rng.pick(oddValues)) })
    const base = rng.pick(bases)
    const res = await fetch(`${base}/v1/approvals/${requestId}/decide`, { method: 'POST', headers: { 'content-type': 'application/json', ...(auth ? { authorization: auth } : {}) }, body })
    const text = await res.text()
    const parsed = res.headers.get('content-type')?.startsWith('application/json') ? (JSON.parse(text) as { approved?: boolean; counted?: boolean }) : text
    statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
    const what = `seed ${SEED} round ${round}: decide ${base}/v1/approvals/${requestId} as ${who ?? JSON.stringify(auth?.slice(0, 20))} ${body.slice(0, 200)}`
    try {
      contract.check('post', '/v1/approvals/{requestId}/decide', { status: res.status, body: parsed, contentType: res.headers.get('content-type') })
    } catch (e) {
      problems.push(`${what}\n  ${(e as Error).message}`)
    }
    if (res.status === 200) {
      if (!who) problems.push(`${what}\n  accepted without an operator's token: ${text}`)
      else if (target?.summary.intentId) {
        // A 200 means the body was exactly {approved: boolean}.
        const vote = voteOf(target.summary.intentId)
        if ((JSON.parse(body) as { approved: boolean }).approved) vote.approvedBy.add(who)
        else vote.denied = true
      }
    }
  }

  // An operator denies what is still waiting, so that every call ends.
  const denier = names[0]!
  await waitFor(async () => {
    for (const p of await pending()) {
      const r = await fetch(`${stack.url}/v1/approvals/${p.requestId}/decide`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens[denier]}` }, body: '{"approved":false}' })
      if (r.status === 200 && p.summary.intentId) voteOf(p.summary.intentId).denied = true
    }
    return (await pending()).length === 0
  }, { timeoutMs: 30_000, what: 'the pending list to empty' })

  let approvedCount = 0
  for (const w of waiting) {
    const r = await w.answer
    const vote = votes.get(w.intentId)
    const summary = `${vote?.approvedBy.size ?? 0} accepted approvals (${[...(vote?.approvedBy ?? [])].join(', ')}), denied ${vote?.denied ?? false}`
    if (r.status === 200 && r.body.approved === true) {
      approvedCount += 1
      if (!vote || vote.approvedBy.size < setup.needed) problems.push(`intent ${w.intentId} was approved after ${summary}; it needs ${setup.needed}`)
    } else if (r.status === 403 && r.body.reason === 'user_declined') {
      if (!vote?.denied) problems.push(`intent ${w.intentId} was declined after ${summary}`)
    } else problems.push(`intent ${w.intentId}: approve-request answered ${r.status} ${JSON.stringify(r.body)}`)
  }
  console.log(`decide fuzz seed ${SEED}, ${setup.needed} needed: ${waiting.length} requests (${approvedCount} approved), decide statuses ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`)
  expect(problems).toEqual([])
  expect(approvedCount).toBeGreaterThan(0)
  expect(statuses.get(401) ?? 0).toBeGreaterThan(0)
  expect(await stack.auditVerify()).toMatch(/^audit chain OK: \d+ events/)
}

describe(`decide under fuzzed calls (seed ${SEED})`, () => {
  it(`the operator token, ${ROUNDS} rounds: approved only after the operator's accepted approval, declined only after their accepted denial`, async () => {
    const setup: Setup = { operators: {}, needed: 1 }
    await fuzzDecides(await start(setup), setup)
  }, 300_000)

  it(`three named operators and a quorum of two, ${ROUNDS} rounds: approved only after two distinct operators' accepted approvals`, async () => {
    const setup: Setup = { operators: Object.fromEntries(['alice', 'bob', 'carol'].map((n) => [n, randomBytes(32).toString('base64url')])), needed: 2 }
    await fuzzDecides(await start(setup), setup)
  }, 300_000)
})
