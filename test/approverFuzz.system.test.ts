// The approver trusts the gateway no more than the signer does: here a
// compromised gateway sends the real approver (web mode, no operator acting)
// thousands of mutated calls over approver.sock (requestApproval with odd
// intents, findings, token facts, quorums; approvalUpdates with odd cursors;
// withdrawApproval; verifyOperatorToken with near-miss tokens), seeded like
// fuzz.system.test.ts (FUZZ_SEED replays a run). Whatever it sends:
// - every answer is a ticket or a refusal (APPROVAL_REFUSED, invalid
//   params / request), never an internal error, and the approver stays up;
// - nothing is ever approved: no operator decided, so no outcome carries a
//   token, in any answer or update;
// - only the real operator token verifies;
// - the pending list the dashboard reads still answers in its documented
//   shape, every card included; the audit chain verifies;
// - in Chromium the dashboard shows every one of those cards, and no markup
//   a card carries runs (fuzz.ts's values set window.__pwned if they do);
//   behind the escaping, its CSP stops a handler attribute by any route.
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseEther, parseUnits, type Address } from 'viem'
import {
  APPROVAL_REFUSED,
  APPROVER_SOCKET,
  createRpcClient,
  noPreflight,
  type ApprovalTicket,
  type ApprovalUpdates,
  type RpcClient,
  type TxIntent,
  type VerifyOperatorTokenResult,
} from '@countersign/shared'
import { chromium, type Browser } from 'playwright-core'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { buildOpenApiDocument } from '../services/gateway/dist/openapi.js'
import { responseChecker } from './support/contract.js'
import { BASE_ROUTER, BASE_USDC, BASE_WETH, clone, FUZZ_RECIPIENT, fuzzSettings, mutate, oddValues, rpcOutcome, seededRandom } from './support/fuzz.js'
import { intentFor } from './support/intents.js'
import { Stack } from './support/stack.js'

const { seed: SEED, rounds: ROUNDS } = fuzzSettings(3000)

const WALLET = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266' as Address
const BOB = FUZZ_RECIPIENT
const USDC = BASE_USDC
const WETH = BASE_WETH
const ROUTER = BASE_ROUTER

let stack: Stack
let approver: RpcClient
let browser: Browser | undefined

function requestParams(intent: TxIntent): Record<string, unknown> {
  const erc20 = JSON.stringify(intent.action).includes(USDC.address)
  return {
    intent,
    preflight: {
      ...noPreflight(),
      riskScore: 35,
      riskFactors: [{ id: 'new_recipient', weight: 20, detail: 'first transfer to this address' }],
      warnings: ['the recipient has never received funds'],
      balanceDiffs: [{ token: USDC.address, change: '-5000000' }],
      gasEstimate: '65000',
      simulationSuccess: true,
    },
    policyReasons: ['value above the approval threshold'],
    ...(erc20 ? { tokenFacts: [{ address: USDC.address, symbol: 'USDC', decimals: 6 }] } : {}),
  }
}

/** Characters that make shown text lie (terminal escapes, bidi overrides, zero-width): an operator must see them as escapes. */
const LYING = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/u

/** Every string inside the pending list that still carries one, with where it is. */
function lyingText(pending: unknown[]): Array<[string, string]> {
  const strings = (v: unknown, at: string): Array<[string, string]> =>
    typeof v === 'string' ? [[at, v]] : v && typeof v === 'object' ? Object.entries(v).flatMap(([k, c]) => strings(c, `${at}.${k}`)) : []
  return pending.flatMap((p, i) => strings(p, `pending[${i}]`)).filter(([, text]) => LYING.test(text))
}

const pendingList = async () => ((await (await fetch(`http://127.0.0.1:${stack.approverPort}/v1/approvals/pending`)).json()) as { pending: unknown[] }).pending

/** The request for a wallet of its own: the fuzzing may have filled WALLET's five pending places. */
function onOwnWallet(request: Record<string, unknown>): Record<string, unknown> {
  const intent = request.intent as TxIntent
  return { ...request, intent: { ...intent, id: crypto.randomUUID(), wallet: { address: privateKeyToAccount(generatePrivateKey()).address } } }
}

function validRequests(): Array<Record<string, unknown>> {
  const actions = [
    { type: 'transfer_native', to: BOB, amount: parseEther('0.5').toString() },
    { type: 'transfer', asset: USDC, to: BOB, amount: parseUnits('5', 6).toString() },
    { type: 'approve', asset: USDC, spender: ROUTER, amount: (2n ** 256n - 1n).toString() },
    { type: 'swap_exact_in', router: ROUTER, assetIn: WETH, assetOut: USDC, amountIn: parseEther('0.1').toString(), minAmountOut: '1' },
    { type: 'swap_exact_out', router: ROUTER, assetIn: WETH, assetOut: USDC, amountOut: '1000', maxAmountIn: parseEther('0.1').toString() },
  ]
  const requests = actions.map((a) => requestParams(intentFor(WALLET, a as never, { maxSlippageBps: a.type.startsWith('swap') ? 50 : 0 })))
  requests.push({ ...requestParams(intentFor(WALLET, actions[0] as never)), skill: 'fuzz-skill' })
  requests.push({ ...requestParams(intentFor(WALLET, actions[0] as never)), quorum: 2 })
  return requests
}

beforeAll(async () => {
  stack = new Stack({ policy: { maxTxPerHour: 1_000_000 } })
  await stack.startSigner()
  await stack.startApprover({ SERVICE_APPROVAL_MODE: 'web' })
  approver = createRpcClient({ socketPath: path.join(stack.dataDir, 'run', APPROVER_SOCKET), timeoutMs: 30_000 })
}, 60_000)

afterAll(async () => {
  await browser?.close()
  approver?.close()
  await stack?.stop()
})

describe(`approver.sock under a compromised gateway's fuzzed calls (seed ${SEED})`, () => {
  it(`${ROUNDS} mutated calls: tickets or refusals only, nothing approved without an operator, only the real operator token verifies`, async () => {
    const rng = seededRandom(SEED)
    const operatorToken = stack.operatorToken
    const outcomes = new Map<string, number>()
    const problems: string[] = []
    // The owners (requestApproval owner) of the requests this run made: withdrawApproval takes one of these.
    const owners: string[] = []
    const cursors: Array<string | null> = [null]
    let requests = validRequests()
    const count = (k: string) => outcomes.set(k, (outcomes.get(k) ?? 0) + 1)

    const noApproval = (what: string, outcome: unknown) => {
      if (JSON.stringify(outcome).includes('"approved":true') || JSON.stringify(outcome).includes('approvalTokenId')) problems.push(`${what}\n  approved without an operator: ${JSON.stringify(outcome)}`)
    }

    for (let round = 0; round < ROUNDS; round++) {
      if (round % 100 === 0) requests = validRequests()
      // What an operator would read right now.
      if (round % 25 === 0) for (const [at, text] of lyingText(await pendingList())) problems.push(`seed ${SEED} round ${round}: ${at} shows ${JSON.stringify(text)} unescaped`)
      const kind = rng.int(10)
      let method: string
      let params: unknown
      if (kind < 6) {
        method = 'requestApproval'
        const base = rng.pick(requests)
        // Each call with an owner of its own, as the gateway's skill runner sends it.
        const fresh = rng.chance(0.7) ? { ...clone(base), intent: { ...clone(base.intent as object), id: crypto.randomUUID() }, owner: crypto.randomUUID() } : { ...clone(base), owner: crypto.randomUUID() }
        params = rng.chance(0.2) ? fresh : mutate(rng, fresh, requests)
      } else if (kind === 6) {
        method = 'approvalUpdates'
        params = rng.chance(0.6) ? { cursor: rng.pick(cursors) } : mutate(rng, { cursor: rng.pick(cursors) ?? 'x' })
      } else if (kind === 7) {
        method = 'withdrawApproval'
        params = rng.chance(0.7) && owners.length > 0 ? { owner: rng.pick(owners) } : mutate(rng, { owner: crypto.randomUUID() })
      } else if (kind === 8) {
        method = 'verifyOperatorToken'
        // The gateway hands over the bearer value alone (operatorAuthority.ts); only the token itself verifies.
        const nearMiss = rng.pick([
          operatorToken,
          operatorToken.slice(0, -1),
          `${operatorToken}x`,
          operatorToken.toUpperCase(),
          ` ${operatorToken}`,
          `Bearer ${operatorToken}`,
          operatorToken.slice(0, 8),
          '',
          `${operatorToken}\u0000`,
          null,
        ])
        params = rng.chance(0.8) ? { token: nearMiss } : mutate(rng, { token: nearMiss ?? '' })
      } else {
        method = rng.pick(['requestApproval', 'approvalUpdates', 'grantApproval', 'sign', '__proto__', 'constructor', 'toString'])
        params = rng.chance(0.5) ? clone(rng.pick(oddValues)) : {}
      }
      const what = `seed ${SEED} round ${round}: ${method} ${JSON.stringify(params)?.slice(0, 1200)}`
      try {
        const result = await approver.call<unknown>(method, params)
        count(`${method} ok`)
        if (method === 'requestApproval') {
          const ticket = result as ApprovalTicket
          const { owner } = params as { owner?: unknown }
          if (ticket.state === 'pending' && typeof owner === 'string') owners.push(owner)
          noApproval(what, ticket)
        } else if (method === 'approvalUpdates') {
          const updates = result as ApprovalUpdates
          cursors.push(updates.cursor)
          noApproval(what, updates.outcomes)
        } else if (method === 'verifyOperatorToken') {
          const verdict = result as VerifyOperatorTokenResult
          const exact = (params as { token: unknown }).token === operatorToken
          if (verdict.valid !== exact) problems.push(`${what}\n  answered valid: ${verdict.valid}`)
        }
      } catch (e) {
        const key = rpcOutcome(e, APPROVAL_REFUSED)
        count(key)
        // The pending list is full (no operator empties it here): withdraw what this run asked for, as a gateway would when its clients left.
        if (key === 'refused: too_many_pending') {
          for (const owner of owners.splice(0)) await approver.call('withdrawApproval', { owner })
        }
        if (key.startsWith('other')) problems.push(`${what}\n  answered ${key}`)
      }
      if (problems.length >= 20) break
    }
    console.log(`approver fuzz seed ${SEED}: ${JSON.stringify(Object.fromEntries([...outcomes].sort()))}`)
    expect(problems).toEqual([])
    expect(outcomes.get('requestApproval ok') ?? 0).toBeGreaterThan(ROUNDS / 20)
    expect(outcomes.get('invalid params') ?? 0).toBeGreaterThan(ROUNDS / 10)
    expect(outcomes.get('verifyOperatorToken ok') ?? 0).toBeGreaterThan(0)

    // What the dashboard reads still answers, in its documented shape, every card included (one known-good among them).
    expect(stack.approver!.child.exitCode).toBeNull()
    expect(await approver.call<ApprovalTicket>('requestApproval', onOwnWallet(validRequests()[1]!))).toMatchObject({ state: 'pending' })
    const contract = responseChecker(buildOpenApiDocument() as never)
    const res = await fetch(`http://127.0.0.1:${stack.approverPort}/v1/approvals/pending`)
    const body = (await res.json()) as { pending: unknown[] }
    contract.check('get', '/v1/approvals/pending', { status: res.status, body, contentType: res.headers.get('content-type') })
    expect(body.pending.length).toBeGreaterThan(0)
    expect(lyingText(body.pending)).toEqual([])
    const ui = await fetch(`http://127.0.0.1:${stack.approverPort}/approval-ui`)
    expect(ui.status).toBe(200)
    expect(await stack.auditVerify()).toMatch(/^audit chain OK: \d+ events/)
  }, 600_000)

  it('the dashboard in Chromium shows every card the fuzzed requests left, and no markup in them runs', async () => {
    // One request with markup in every free-text field a card may show, beside whatever the fuzzing left pending.
    // Markup and characters that make text lie, in every free-text field a card may show.
    const visible = '<svg onload=__pwned=1>'
    const markup = `${visible}\u202e\u001b[2J` // 27 characters: fits a token symbol
    const intent = intentFor(privateKeyToAccount(generatePrivateKey()).address, { type: 'transfer', asset: { ...USDC, symbol: markup }, to: BOB, amount: '5000000' } as never, {
      extra: { metadata: { source: markup, note: markup } },
    })
    const base = requestParams(intent)
    ;(base.preflight as { warnings: string[] }).warnings = [markup]
    const marked = { ...base, skill: markup, policyReasons: [markup], tokenFacts: [{ address: USDC.address, symbol: markup, decimals: 6 }] }
    expect(await approver.call<ApprovalTicket>('requestApproval', marked)).toMatchObject({ state: 'pending' })
    const pending = await pendingList()
    expect(lyingText(pending)).toEqual([])

    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'] })
    const page = await browser.newPage()
    const pageErrors: string[] = []
    const dialogs: string[] = []
    page.on('pageerror', (e) => pageErrors.push(e.message))
    page.on('dialog', (d) => {
      dialogs.push(d.message())
      void d.dismiss()
    })
    await page.addInitScript((t) => sessionStorage.setItem('countersign.operatorToken', t), stack.operatorToken)
    await page.goto(`http://127.0.0.1:${stack.approverPort}/approval-ui`)
    await page.waitForSelector('#conn.live')
    await page.waitForFunction((n) => document.querySelectorAll('[data-request-id]').length === n, pending.length, { timeout: 20_000 })
    // The markup is shown as text, and the hidden characters as their escapes.
    const markedCard = page.locator('[data-request-id]').filter({ hasText: visible })
    expect(await markedCard.count()).toBe(1)
    expect(await markedCard.textContent()).toContain('\\u202e\\u001b[2J')
    // Shown as text, never as an element.
    expect(await page.locator('[data-request-id] img, [data-request-id] svg[onload]').count()).toBe(0)
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined()
    expect(dialogs).toEqual([])
    expect(pageErrors).toEqual([])
    // Behind the escaping, the page's CSP (its script by hash, no 'unsafe-inline'): markup put into the page by any means does not run.
    const blocked = await page.evaluate(
      () =>
        new Promise<{ pwned: unknown; violations: string[] }>((resolve) => {
          const violations: string[] = []
          document.addEventListener('securitypolicyviolation', (e) => violations.push(e.violatedDirective))
          document.body.insertAdjacentHTML('beforeend', '<img src="data:," onload="window.__pwned=1"><img src="/nothing-here" onerror="window.__pwned=1">')
          setTimeout(() => resolve({ pwned: (window as unknown as { __pwned?: number }).__pwned, violations }), 500)
        }),
    )
    expect(blocked.pwned).toBeUndefined()
    expect(blocked.violations.length).toBeGreaterThan(0)
    await page.close()
  }, 120_000)
})
