// No approval without an operator's decision, under attack: in web mode,
// approve-request calls wait on the dashboard while a stream of fuzzed
// decide calls arrives (no token, wrong and near-miss tokens, odd bodies,
// unknown and malformed request ids, the gateway's forwarding route and the
// approver's own port), with the real operator's decisions mixed in. Every
// approve-request that ends approved must have had a 200 {approved: true}
// decide from the operator for its request, every decline a 200 {approved:
// false}; every decide answer is one the document lists. Seeded like the
// other fuzz tests (FUZZ_SEED, FUZZ_ROUNDS).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseEther } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { anvilAccounts, startAnvil, type Anvil } from './support/anvil.js'
import { responseChecker } from './support/contract.js'
import { clone, FUZZ_RECIPIENT, fuzzSettings, mutate, oddBodyText, oddPathSegment, oddValues, seededRandom } from './support/fuzz.js'
import { intentFor } from './support/intents.js'
import { waitFor } from './support/processes.js'
import { importKey, Stack } from './support/stack.js'

const { seed: SEED, rounds: ROUNDS } = fuzzSettings(400)

let anvil: Anvil
let stack: Stack
let contract: ReturnType<typeof responseChecker>

interface Waiting {
  intentId: string
  answer: Promise<{ status: number; body: { approved?: boolean; reason?: string; approvalTokenId?: string } }>
}

beforeAll(async () => {
  anvil = await startAnvil({ chainId: 8453 })
  stack = new Stack({ rpcUrls: { 8453: anvil.rpcUrl }, policy: { maxTxPerHour: 1_000_000, requireApprovalAbove: { valueWei: '0' } } })
  await importKey(stack.dataDir, anvilAccounts[0].privateKey)
  await stack.start({ approver: true, approverEnv: { SERVICE_APPROVAL_MODE: 'web' } })
  contract = responseChecker((await fetch(`${stack.url}/v1/openapi.json`).then((r) => r.json())) as Parameters<typeof responseChecker>[0])
}, 60_000)

afterAll(async () => {
  await stack?.stop()
  await anvil?.stop()
})

describe(`decide under fuzzed calls (seed ${SEED})`, () => {
  it(`${ROUNDS} rounds: an approve-request ends approved only after the operator's 200 approve, declined only after their 200 deny`, async () => {
    const rng = seededRandom(SEED)
    const token = stack.operatorToken
    const bases = [stack.url, `http://127.0.0.1:${stack.approverPort}`]
    const waiting: Waiting[] = []
    /** intentId -> what the operator's accepted decide said. */
    const decided = new Map<string, boolean>()
    const problems: string[] = []
    const statuses = new Map<number, number>()

    const pending = async (): Promise<Array<{ requestId: string; summary: { intentId?: string } }>> =>
      ((await (await fetch(`${stack.url}/v1/approvals/pending`)).json()) as { pending: Array<{ requestId: string; summary: { intentId?: string } }> }).pending

    for (let round = 0; round < ROUNDS && problems.length < 20; round++) {
      if (rng.chance(0.25)) {
        // A new request on a wallet of its own (five may wait per wallet); approve-request blocks until it is decided.
        const wallet = privateKeyToAccount(generatePrivateKey()).address
        const intent = intentFor(wallet, { type: 'transfer_native', to: FUZZ_RECIPIENT, amount: parseEther('0.01').toString() })
        waiting.push({ intentId: intent.id, answer: stack.post('/v1/tx/approve-request', intent) as Waiting['answer'] })
        continue
      }
      const list = await pending()
      const target = list.length > 0 && rng.chance(0.8) ? rng.pick(list) : null
      const requestId = target ? target.requestId : rng.chance(0.5) ? crypto.randomUUID() : oddPathSegment(rng)
      const operator = rng.chance(0.3)
      const auth = operator
        ? `Bearer ${token}`
        : rng.pick([null, `Bearer ${token.slice(0, -1)}`, `Bearer ${token}x`, `Bearer ${token.toUpperCase()}`, token, `Basic ${Buffer.from(token).toString('base64')}`, 'Bearer ', `Bearer  ${token} extra`])
      const approved = rng.chance(0.6)
      const body = rng.chance(0.7) ? JSON.stringify({ approved }) : rng.chance(0.7) ? JSON.stringify(mutate(rng, { approved })) : rng.chance(0.5) ? oddBodyText(rng, { approved }) : JSON.stringify({ approved: clone(rng.pick(oddValues)) })
      const base = rng.pick(bases)
      const res = await fetch(`${base}/v1/approvals/${requestId}/decide`, { method: 'POST', headers: { 'content-type': 'application/json', ...(auth ? { authorization: auth } : {}) }, body })
      const text = await res.text()
      const parsed = res.headers.get('content-type')?.startsWith('application/json') ? (JSON.parse(text) as { approved?: boolean; decided?: boolean }) : text
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
      const what = `seed ${SEED} round ${round}: decide ${base}/v1/approvals/${requestId} auth=${JSON.stringify(auth?.slice(0, 20))} ${body.slice(0, 200)}`
      try {
        contract.check('post', '/v1/approvals/{requestId}/decide', { status: res.status, body: parsed, contentType: res.headers.get('content-type') })
      } catch (e) {
        problems.push(`${what}\n  ${(e as Error).message}`)
      }
      if (res.status === 200) {
        if (!operator) problems.push(`${what}\n  decided without the operator token: ${text}`)
        if (target?.summary.intentId) decided.set(target.summary.intentId, (parsed as { approved: boolean }).approved)
      }
    }

    // The operator denies what is still waiting, so that every call ends.
    await waitFor(async () => {
      for (const p of await pending()) {
        const r = await stack.decide(p.requestId, false)
        if (r.status === 200 && p.summary.intentId) decided.set(p.summary.intentId, false)
      }
      return (await pending()).length === 0
    }, { timeoutMs: 30_000, what: 'the pending list to empty' })

    let approvedCount = 0
    for (const w of waiting) {
      const r = await w.answer
      const said = decided.get(w.intentId)
      if (r.status === 200 && r.body.approved === true) {
        approvedCount += 1
        if (said !== true) problems.push(`intent ${w.intentId} was approved, but the operator's accepted decide said ${String(said)}`)
      } else if (r.status === 403 && r.body.reason === 'user_declined') {
        if (said !== false) problems.push(`intent ${w.intentId} was declined, but the operator's accepted decide said ${String(said)}`)
      } else problems.push(`intent ${w.intentId}: approve-request answered ${r.status} ${JSON.stringify(r.body)}`)
    }
    console.log(`decide fuzz seed ${SEED}: ${waiting.length} requests (${approvedCount} approved), decide statuses ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`)
    expect(problems).toEqual([])
    expect(approvedCount).toBeGreaterThan(0)
    expect(statuses.get(401) ?? 0).toBeGreaterThan(0)
    expect(await stack.auditVerify()).toMatch(/^audit chain OK: \d+ events/)
  }, 300_000)
})
