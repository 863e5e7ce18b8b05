import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { approverMethods, buildTransaction, createAjv, defaultRouterTable, noPreflight, normalizeIntent, requestApprovalParamsSchema, RpcError, RpcUnavailableError, signerMethods, type AuditLog, type TxIntent } from '@countersign/shared'
import { actions, makeIntent, WALLET } from '@countersign/shared/testing/intents'
import { makeTestGateway, testClock } from '../app.testkit.js'
import { createSentTxs } from '../store/sentTxs.js'
import { startJsonRpcNode, type JsonRpcNode } from '../chain/jsonRpcNode.testkit.js'
import type { RunPreflight } from './approveRequest.js'

type Gw = Awaited<ReturnType<typeof makeTestGateway>>
let gw: Gw | undefined
afterEach(async () => {
  await gw?.close()
  gw = undefined
})

/** A preflight that found nothing wrong and audits preflight_completed, as the chain preflight does, without awaiting it. */
const cleanPreflight =
  (audit: AuditLog): RunPreflight =>
  async (intent) => ({
    findings: { ...noPreflight(), simulationSuccess: true, gasEstimate: '21000' },
    recorded: audit.append({ intentId: intent.id, event: 'preflight_completed', data: { simulationSuccess: true } }),
  })

describe('POST /v1/tx/approve-request: audit commits', () => {
  it('an allowed intent pays one commit: preflight_completed, policy_evaluated, approve_request_created and tx_built, in that order, all durable before the answer', async () => {
    gw = await makeTestGateway({ policy: { requireApprovalAbove: { valueWei: '1000000000000000000000' } }, preflight: cleanPreflight })
    const intent = makeIntent({ action: actions.native(), nowMs: gw.clock() })
    const before = gw.audit.commits
    const res = await gw.app.inject({ method: 'POST', url: '/v1/tx/approve-request', payload: intent })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({ approved: true, approvalRequired: false })
    expect(gw.audit.commits - before).toBe(1)
    // Read back from audit.db itself: committed before the answer left.
    const events = gw.audit.list({ limit: 10, intentId: intent.id }).reverse().map((e) => e.event)
    expect(events).toEqual(['preflight_completed', 'policy_evaluated', 'approve_request_created', 'tx_built'])
  })

  it('a denied intent commits preflight_completed, policy_evaluated and approve_request_created together before its 403, and no tx_built', async () => {
    gw = await makeTestGateway({ policy: { recipientAllowlist: ['0x000000000000000000000000000000000000dEaD'] }, preflight: cleanPreflight })
    const intent = makeIntent({ action: actions.native(), nowMs: gw.clock() })
    const before = gw.audit.commits
    const res = await gw.app.inject({ method: 'POST', url: '/v1/tx/approve-request', payload: intent })
    expect(res.statusCode).toBe(403)
    expect(res.json()).toMatchObject({ error: 'policy_denied', decision: 'deny' })
    expect(gw.audit.commits - before).toBe(1)
    const events = gw.audit.list({ limit: 10, intentId: intent.id }).reverse().map((e) => e.event)
    expect(events).toEqual(['preflight_completed', 'policy_evaluated', 'approve_request_created'])
  })

  describe('require_approval: the approver is asked once the first commit is committed; every answer waits until it is durable', () => {
    const TOKEN = '6f1c3d52-8a4e-4b7f-9d0e-2c5a1b3e4f60'

    /** A gateway whose appendOrdered keeps `durable` back until `hold` settles (as an fsync in progress would); the approver grants at once and records what audit.db held when asked. */
    async function gatewayHolding(hold: Promise<void>, seenByApprover: string[][]) {
      const g = await makeTestGateway({
        policy: { requireApprovalAbove: { valueWei: '1' } },
        preflight: cleanPreflight,
        wrapAudit: (log) => ({
          ...log,
          appendOrdered: (event) => {
            const written = log.appendOrdered(event)
            return { ordered: written.ordered, durable: hold.then(() => written.durable) }
          },
        }),
        approver: async (method, params) => {
          if (method === approverMethods.approvalUpdates) return { cursor: 'c0', reset: false, outcomes: [] }
          if (method !== approverMethods.requestApproval) throw new Error(`unexpected approver call ${method}`)
          const { intent } = params as { intent: TxIntent }
          seenByApprover.push(g.audit.list({ limit: 10, intentId: intent.id }).reverse().map((e) => e.event))
          return { state: 'decided', outcome: { approved: true, requestId: 'r-1', txRequestHash: `0x${'00'.repeat(32)}`, approvalTokenId: TOKEN } }
        },
      })
      return g
    }

    it('asks while the commit is not yet durable, and hands out the token only after it is', async () => {
      let release!: () => void
      const seen: string[][] = []
      gw = await gatewayHolding(new Promise<void>((resolve) => (release = resolve)), seen)
      const intent = makeIntent({ action: actions.native(), nowMs: gw.clock() })
      let answered = false
      const answer = gw.app.inject({ method: 'POST', url: '/v1/tx/approve-request', payload: intent }).then((res) => {
        answered = true
        return res
      })
      for (let i = 0; i < 200 && seen.length === 0; i++) await new Promise((r) => setTimeout(r, 5))
      // The approver saw the gateway's rows committed, in order, before its own would follow them.
      expect(seen).toEqual([['preflight_completed', 'policy_evaluated', 'approve_request_created']])
      await new Promise((r) => setTimeout(r, 50))
      expect(answered).toBe(false)
      release()
      const res = await answer
      expect(res.statusCode).toBe(200)
      expect(res.json()).toMatchObject({ approved: true, approvalRequired: true, approvalTokenId: TOKEN })
      expect(gw.audit.list({ limit: 10, intentId: intent.id }).reverse().map((e) => e.event)).toEqual(['preflight_completed', 'policy_evaluated', 'approve_request_created', 'tx_built'])
    })

    it('a first commit that fails after the approver was asked (its fsync) answers with an error and never the token', async () => {
      const seen: string[][] = []
      const fsyncFails = Promise.reject(new Error('fdatasync failed: EIO'))
      fsyncFails.catch(() => undefined) // observed by the route when it waits; this only keeps it from counting as unhandled meanwhile
      gw = await gatewayHolding(fsyncFails, seen)
      const intent = makeIntent({ action: actions.native(), nowMs: gw.clock() })
      const res = await gw.app.inject({ method: 'POST', url: '/v1/tx/approve-request', payload: intent })
      expect(seen).toHaveLength(1)
      expect(res.statusCode).toBe(500)
      expect(res.body).not.toContain(TOKEN)
    })
  })
})

describe('POST /v1/tx/approve-request: a gas cost above constraints.maxGasWei, found by the chain preflight', () => {
  let node: JsonRpcNode
  /** A node on which a native transfer simulates at 21000 gas, with a base fee of 1 gwei and no GasPriceOracle. */
  beforeAll(async () => {
    const block = { number: '0x10', hash: `0x${'12'.repeat(32)}`, parentHash: `0x${'34'.repeat(32)}`, timestamp: '0x6740a0c0', baseFeePerGas: '0x3b9aca00', gasLimit: '0x1c9c380', gasUsed: '0x0', transactions: [] }
    const answers: Record<string, unknown> = {
      eth_chainId: '0x2105',
      eth_simulateV1: [{ calls: [{ status: '0x1', gasUsed: '0x5208', returnData: '0x', logs: [] }] }],
      eth_getBlockByNumber: block,
      eth_maxPriorityFeePerGas: '0x1',
      eth_getCode: '0x',
    }
    node = await startJsonRpcNode((call) => (call.method in answers ? { result: answers[call.method] } : { error: { code: -32601, message: `${call.method} is not served here` } }))
  })
  afterAll(() => node.close())

  it('is 403 before any operator is asked, and its approve_request_created carries the preflight\'s riskScore (found by review: it had none)', async () => {
    gw = await makeTestGateway({ rpcUrls: { 8453: node.url }, policy: { requireApprovalAbove: { valueWei: '1' } } })
    const intent = makeIntent({ action: actions.native(), maxGasWei: '1000', nowMs: gw.clock() })
    const res = await gw.app.inject({ method: 'POST', url: '/v1/tx/approve-request', payload: intent })
    expect(res.statusCode, res.body).toBe(403)
    expect(res.json()).toMatchObject({ error: 'policy_denied', reasons: [expect.stringMatching(/^estimated gas cost \d+ wei .* exceeds constraints.maxGasWei 1000 wei$/)] })
    const events = gw.audit.list({ limit: 10, intentId: intent.id })
    const preflight = events.find((e) => e.event === 'preflight_completed')!
    const created = events.find((e) => e.event === 'approve_request_created')!
    expect(preflight.data.riskScore).toEqual(expect.any(Number))
    expect(created.data).toMatchObject({ decision: 'deny', riskScore: preflight.data.riskScore, reasonCodes: ['gas_cost_exceeds_max'], maxGasWei: '1000' })
  })
})

describe('POST /v1/tx/approve-request: findings a chosen contract makes too large', () => {
  it('a revert reason, risk detail and token symbol beyond the approver\'s bounds reach it clipped, not refused (the approver validates as the real one does)', async () => {
    const validate = createAjv().compile(requestApprovalParamsSchema)
    const long = `execution reverted: ${'x'.repeat(5000)}`
    const asked: unknown[] = []
    gw = await makeTestGateway({
      policy: { requireApprovalAbove: { valueWei: '1' } },
      preflight: (audit) => async (intent) => ({
        findings: { ...noPreflight(), simulationSuccess: false, riskScore: 50, warnings: [long], riskFactors: [{ id: 'simulation_reverted', weight: 50, detail: long }], gasEstimate: '9'.repeat(30) },
        recorded: audit.append({ intentId: intent.id, event: 'preflight_completed', data: { simulationSuccess: false } }),
      }),
      approver: async (method, params) => {
        if (method === approverMethods.approvalUpdates) return { cursor: 'c0', reset: false, outcomes: [] }
        // What the approver's socket server answers for params outside its schema.
        if (!validate(params)) throw new RpcError(-32602, `invalid params: ${JSON.stringify(validate.errors)}`)
        asked.push(params)
        return { state: 'decided', outcome: { approved: true, requestId: 'r-1', txRequestHash: `0x${'00'.repeat(32)}`, approvalTokenId: '6f1c3d52-8a4e-4b7f-9d0e-2c5a1b3e4f60' } }
      },
    })
    const res = await gw.app.inject({ method: 'POST', url: '/v1/tx/approve-request', payload: makeIntent({ action: actions.native(), nowMs: gw.clock() }) })
    expect(res.statusCode).toBe(200)
    expect(asked).toHaveLength(1)
    const sent = asked[0] as { preflight: { warnings: string[]; riskFactors: Array<{ detail: string }>; gasEstimate: string | null } }
    expect(sent.preflight.warnings[0]).toHaveLength(1024)
    expect(sent.preflight.warnings[0]!.endsWith('…')).toBe(true)
    expect(sent.preflight.riskFactors[0]!.detail.startsWith('execution reverted: xxx')).toBe(true)
    expect(sent.preflight.gasEstimate).toBeNull()
    // What the client is told is the gateway's own report, not the clipped copy.
    expect(res.json().warnings[0]).toBe(long)
  })
})

describe('POST /v1/tx/approve-request: answers from the approver of another shape', () => {
  const TOKEN = '6f1c3d52-8a4e-4b7f-9d0e-2c5a1b3e4f60'
  const hash = `0x${'00'.repeat(32)}`

  it('a ticket that is not one (null, a pending ticket without its expiry) is 503 approver_unavailable, naming what was wrong', async () => {
    for (const ticket of [null, { state: 'pending', requestId: 'r-1', txRequestHash: hash }, { state: 'decided', outcome: { approved: true, requestId: 'r-1', txRequestHash: hash } }]) {
      gw = await makeTestGateway({
        policy: { requireApprovalAbove: { valueWei: '1' } },
        preflight: cleanPreflight,
        approver: async (method) => (method === approverMethods.approvalUpdates ? { cursor: 'c0', reset: false, outcomes: [] } : ticket),
      })
      const res = await gw.app.inject({ method: 'POST', url: '/v1/tx/approve-request', payload: makeIntent({ action: actions.native(), nowMs: gw.clock() }) })
      expect(res.statusCode).toBe(503)
      expect(res.json()).toEqual({ error: 'approver_unavailable', message: expect.stringMatching(/^the approver answered requestApproval with result/) })
      await gw.close()
      gw = undefined
    }
  })

  it('an update page of another shape (outcomes null) is logged and polled again; the waiting client gets the decision that follows', async () => {
    const unhandled: unknown[] = []
    const onUnhandled = (reason: unknown) => unhandled.push(reason)
    process.on('unhandledRejection', onUnhandled)
    let polls = 0
    try {
      gw = await makeTestGateway({
        policy: { requireApprovalAbove: { valueWei: '1' } },
        preflight: cleanPreflight,
        approver: async (method) => {
          if (method === approverMethods.requestApproval) return { state: 'pending', requestId: 'r-1', txRequestHash: hash, expiresAt: Date.now() + 300_000 }
          polls += 1
          if (polls === 1) return { cursor: 'c0', reset: false, outcomes: [] }
          if (polls === 2) return { cursor: 'c1', reset: false, outcomes: null }
          return { cursor: 'c2', reset: false, outcomes: [{ approved: true, requestId: 'r-1', txRequestHash: hash, approvalTokenId: TOKEN }] }
        },
      })
      const res = await gw.app.inject({ method: 'POST', url: '/v1/tx/approve-request', payload: makeIntent({ action: actions.native(), nowMs: gw.clock() }) })
      expect(res.statusCode).toBe(200)
      expect(res.json()).toMatchObject({ approved: true, approvalTokenId: TOKEN })
      expect(polls).toBeGreaterThanOrEqual(3)
      expect(unhandled).toEqual([])
    } finally {
      process.off('unhandledRejection', onUnhandled)
    }
  })
})

describe('POST /v1/tx/approve-request: only for a wallet the signer holds a key for', () => {
  const TOKEN = '6f1c3d52-8a4e-4b7f-9d0e-2c5a1b3e4f60'
  const MADE_UP = '0x000000000000000000000000000000000000dEaD'
  const ADDED = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC'
  const account = (address: string) => ({ address, label: null, dev: false, unlocked: true, backend: 'keystore' })

  /** A gateway whose approver grants at once and whose signer lists `held()`; counts what each was asked. */
  async function gatewayWithSigner(held: () => string[] | Error) {
    const asked = { requestApproval: 0, accounts: 0, preflight: 0 }
    const g = await makeTestGateway({
      policy: { requireApprovalAbove: { valueWei: '1' } },
      preflight: (audit) => {
        const clean = cleanPreflight(audit)
        return async (intent, built) => {
          asked.preflight += 1
          return clean(intent, built)
        }
      },
      signer: async (method) => {
        if (method !== signerMethods.accounts) throw new Error(`unexpected signer call ${method}`)
        asked.accounts += 1
        const list = held()
        if (list instanceof Error) throw list
        return list.map(account)
      },
      approver: async (method) => {
        if (method === approverMethods.approvalUpdates) return { cursor: 'c0', reset: false, outcomes: [] }
        asked.requestApproval += 1
        return { state: 'decided', outcome: { approved: true, requestId: 'r-1', txRequestHash: `0x${'00'.repeat(32)}`, approvalTokenId: TOKEN } }
      },
    })
    return { g, asked }
  }
  const approveRequest = (g: Gw, wallet: string) =>
    g.app.inject({ method: 'POST', url: '/v1/tx/approve-request', payload: makeIntent({ action: actions.native(), wallet: wallet as `0x${string}`, nowMs: g.clock() }) })

  it('a made-up wallet is 403 policy_denied naming it, audited, before the preflight and without asking the approver (100 of them once filled its 500 pending places); the signer\'s wallet still gets its token', async () => {
    const { g, asked } = await gatewayWithSigner(() => [WALLET])
    gw = g
    const refused = await approveRequest(g, MADE_UP)
    expect(refused.statusCode).toBe(403)
    expect(refused.json()).toEqual({ error: 'policy_denied', decision: 'deny', reasons: [`the signer holds no key for wallet ${MADE_UP}`], policyVersion: '1' })
    expect(asked).toEqual({ requestApproval: 0, accounts: 1, preflight: 0 })
    const intentId = g.audit.list({ limit: 5 })[0]!.intentId
    expect(g.audit.list({ limit: 5, intentId }).map((e) => [e.event, e.data])).toEqual([
      // riskScore null, not missing (found by review): SPEC lists it among this event's fields, and no preflight ran.
      ['approve_request_created', { intentId, decision: 'deny', riskScore: null, reasons: [`the signer holds no key for wallet ${MADE_UP}`], reasonCodes: ['no_signer_key'] }],
    ])

    const held = await approveRequest(g, WALLET)
    expect(held.statusCode).toBe(200)
    expect(held.json()).toMatchObject({ approved: true, approvalRequired: true, approvalTokenId: TOKEN })
    expect(asked).toMatchObject({ requestApproval: 1, preflight: 1 })
  })

  it('the list is asked again after 30 s, and at once for a wallet it did not name: a key the signer gained meanwhile is found', async () => {
    let listed: string[] = [WALLET]
    const { g, asked } = await gatewayWithSigner(() => listed)
    gw = g
    expect((await approveRequest(g, WALLET)).statusCode).toBe(200)
    expect((await approveRequest(g, WALLET)).statusCode).toBe(200)
    expect(asked.accounts).toBe(1)
    g.clock.advance(30_000)
    expect((await approveRequest(g, WALLET)).statusCode).toBe(200)
    expect(asked.accounts).toBe(2)
    // The signer restarted with one more key (it lists addresses as it likes; they compare without case).
    listed = [WALLET, ADDED.toLowerCase()]
    expect((await approveRequest(g, ADDED)).statusCode).toBe(200)
    expect(asked).toMatchObject({ accounts: 3, requestApproval: 4 })
  })

  it('a signer that cannot be asked: 503 signer_unavailable for a wallet it never listed, nothing asked; a wallet it listed before still goes to the operator', async () => {
    let answer: string[] | Error = [WALLET]
    const { g, asked } = await gatewayWithSigner(() => answer)
    gw = g
    expect((await approveRequest(g, WALLET)).statusCode).toBe(200)
    g.clock.advance(60_000)
    for (const down of [new RpcUnavailableError('connect ECONNREFUSED signer.sock', false), new Error('no answer')]) {
      answer = down
      const unknown = await approveRequest(g, MADE_UP)
      expect(unknown.statusCode).toBe(503)
      expect(unknown.json()).toEqual({ error: 'signer_unavailable', message: expect.stringContaining(`whether it holds a key for wallet ${MADE_UP}`) })
      expect((await approveRequest(g, WALLET)).statusCode).toBe(200)
    }
    expect(asked.requestApproval).toBe(3)
  })

  it('an accounts answer of another shape is treated as no answer: 503, never a guess', async () => {
    for (const odd of [null, { address: WALLET }, [{ address: 'me' }], [{}]]) {
      gw = await makeTestGateway({
        policy: { requireApprovalAbove: { valueWei: '1' } },
        preflight: cleanPreflight,
        signer: async () => odd,
        approver: async () => {
          throw new Error('the approver must not be asked')
        },
      })
      const res = await approveRequest(gw, WALLET)
      expect(res.statusCode, JSON.stringify(odd)).toBe(503)
      expect(res.json()).toEqual({ error: 'signer_unavailable', message: expect.stringContaining('the signer answered accounts with') })
      await gw.close()
      gw = undefined
    }
  })
})

describe('POST /v1/tx/approve-request: an intent signed before (gateway.db holds its transaction at nonce 7)', () => {
  const TX_HASH = `0x${'ab'.repeat(32)}`
  let node: JsonRpcNode | undefined
  afterEach(() => {
    node?.close()
    node = undefined
  })

  /** A gateway on a node answering `answers`, every transfer needing an operator (or `policy`), and an approver that must not be asked. */
  async function signedBeforeGateway(answers: Record<string, unknown>, policy: Record<string, unknown> = { requireApprovalAbove: { valueWei: '1' } }) {
    const rpc = await startJsonRpcNode((call) => (call.method in answers ? { result: answers[call.method] } : { error: { code: -32601, message: `${call.method} is not served here` } }))
    node = rpc
    const asked: string[] = []
    const clock = testClock()
    const g = await makeTestGateway({
      clock,
      rpcUrls: { 8453: node.url },
      policy,
      preflight: cleanPreflight,
      approver: async (method) => {
        asked.push(method)
        throw new Error(`no operator may be asked (${method})`)
      },
    })
    const nowS = Math.floor(clock() / 1000)
    const intent = makeIntent({ action: actions.native(), nowMs: clock(), deadline: nowS + 60 })
    const built = buildTransaction(normalizeIntent(intent), defaultRouterTable())
    createSentTxs(g.db).save(
      { intentId: intent.id, chainId: 8453, wallet: WALLET, txRequestHash: built.txRequestHash, nonce: 7, txHash: TX_HASH, signedTx: '0x02f8', broadcastOk: true, deadline: nowS + 60 },
      clock(),
    )
    return { g, clock, intent, nowS, asked, rpc }
  }

  // Before, each of these asked an operator to approve a payment already made (or to "decline" it).
  for (const [fate, answers] of [
    ['mined', { eth_chainId: '0x2105', eth_getTransactionCount: '0x8', eth_getTransactionReceipt: { blockNumber: '0x10' } }],
    ['not mined yet, within its deadline', { eth_chainId: '0x2105', eth_getTransactionCount: '0x7' }],
  ] as const) {
    it(`${fate}: answered without an operator or a token, its rows committed before the answer, the warning naming the transaction`, async () => {
      const { g, intent, asked } = await signedBeforeGateway(answers)
      gw = g
      const res = await g.app.inject({ method: 'POST', url: '/v1/tx/approve-request', payload: intent })
      expect(res.statusCode, res.body).toBe(200)
      const body = res.json()
      expect(body).toMatchObject({ approved: true, approvalRequired: false, policyDecision: { decision: 'require_approval' } })
      expect(body).not.toHaveProperty('approvalTokenId')
      expect(body.warnings).toContainEqual(expect.stringContaining(`signed before (transaction ${TX_HASH}, nonce 7)`))
      expect(asked).toEqual([])
      // Read back from audit.db: committed before the answer left (preflight_completed in a commit of its own, while the node was asked).
      const events = g.audit.list({ limit: 10, intentId: intent.id }).reverse()
      expect(events.map((e) => e.event)).toEqual(['preflight_completed', 'policy_evaluated', 'approve_request_created', 'tx_built'])
      expect(events[2]?.data).toMatchObject({ decision: 'require_approval', signedBefore: TX_HASH })
    })
  }

  // Before, a policy that now denies the intent (here its recipient left the allowlist) answered 403 "denied" of a
  // payment already made, while sign-and-send returned that transaction.
  it('mined, and policy now denies the intent: answered as signed before, the denial named, as sign-and-send returns that transaction', async () => {
    const { g, intent, asked } = await signedBeforeGateway(
      { eth_chainId: '0x2105', eth_getTransactionCount: '0x8', eth_getTransactionReceipt: { blockNumber: '0x10' } },
      { recipientAllowlist: ['0x9999999999999999999999999999999999999999'] },
    )
    gw = g
    const res = await g.app.inject({ method: 'POST', url: '/v1/tx/approve-request', payload: intent })
    expect(res.statusCode, res.body).toBe(200)
    const body = res.json()
    expect(body).toMatchObject({ approved: true, approvalRequired: false, policyDecision: { decision: 'deny' } })
    expect(body).not.toHaveProperty('approvalTokenId')
    expect(body.warnings).toContainEqual(expect.stringContaining(`signed before (transaction ${TX_HASH}, nonce 7)`))
    expect(body.warnings).toContainEqual(expect.stringMatching(/^policy would deny this intent now \(.*allowlist.*\); that changes nothing for the transaction signed before it$/))
    expect(asked).toEqual([])
    const events = g.audit.list({ limit: 10, intentId: intent.id }).reverse()
    expect(events[2]).toMatchObject({ event: 'approve_request_created', data: { decision: 'deny', signedBefore: TX_HASH } })
    const sent = await g.app.inject({ method: 'POST', url: '/v1/tx/sign-and-send', payload: { intent } })
    expect(sent.statusCode, sent.body).toBe(200)
    expect(sent.json()).toMatchObject({ txHash: TX_HASH, broadcast: true })
  })

  // Found by review: a 200 here for a transaction not mined (its broadcast had failed) led the clients on to a
  // sign-and-send that broadcast it for the first time, though policy now denies it.
  it('not mined, and policy now denies the intent: 403 policy_denied, nobody asked; sign-and-send does not send it either', async () => {
    const { g, intent, asked, rpc } = await signedBeforeGateway(
      { eth_chainId: '0x2105', eth_getTransactionCount: '0x7', eth_sendRawTransaction: TX_HASH },
      { recipientAllowlist: ['0x9999999999999999999999999999999999999999'] },
    )
    gw = g
    const res = await g.app.inject({ method: 'POST', url: '/v1/tx/approve-request', payload: intent })
    expect(res.statusCode, res.body).toBe(403)
    expect(res.json()).toMatchObject({ error: 'policy_denied' })
    expect((res.json() as { reasons: string[] }).reasons.join(' ')).toMatch(/allowlist/)
    expect(asked).toEqual([])
    rpc.methods.length = 0
    const sent = await g.app.inject({ method: 'POST', url: '/v1/tx/sign-and-send', payload: { intent } })
    expect(sent.statusCode, sent.body).toBe(403)
    expect((sent.json() as { reasons: string[] }).reasons.join(' ')).toMatch(/allowlist.*is not sent again/)
    expect(rpc.methods).not.toContain('eth_sendRawTransaction')
  })

  // The rate-limit window counted the intent when it was decided, and sign-and-send sends its transaction again
  // whatever the window says now: a 403 here told the client "denied" of a transaction it then got.
  it('not mined, and denied now only by the hourly limit: answered as signed before, as sign-and-send sends it again', async () => {
    const { g, intent, asked, rpc } = await signedBeforeGateway(
      { eth_chainId: '0x2105', eth_getTransactionCount: '0x7', eth_sendRawTransaction: TX_HASH },
      { requireApprovalAbove: { valueWei: '1' }, maxTxPerHour: 1 },
    )
    gw = g
    const other = await g.app.inject({ method: 'POST', url: '/v1/tx/build', payload: makeIntent({ action: actions.native(), nowMs: g.clock() }) })
    expect(other.statusCode, other.body).toBe(200)
    const res = await g.app.inject({ method: 'POST', url: '/v1/tx/approve-request', payload: intent })
    expect(res.statusCode, res.body).toBe(200)
    const body = res.json()
    expect(body).toMatchObject({ approved: true, approvalRequired: false, policyDecision: { decision: 'deny', reasons: [expect.stringMatching(/^rate limit exceeded/)] } })
    expect(body.warnings).toContainEqual(expect.stringContaining(`signed before (transaction ${TX_HASH}, nonce 7)`))
    expect(asked).toEqual([])
    rpc.methods.length = 0
    const sent = await g.app.inject({ method: 'POST', url: '/v1/tx/sign-and-send', payload: { intent } })
    expect(sent.statusCode, sent.body).toBe(200)
    expect(sent.json()).toMatchObject({ txHash: TX_HASH, broadcast: true })
    expect(rpc.methods).toContain('eth_sendRawTransaction')
  })

  // Found by review: it answered "approved" for a transaction sign-and-send then refused to send (its deadline had passed).
  it('not mined and its deadline passed (a retry naming a later one too): 403 policy_denied, as sign-and-send answers, nobody asked', async () => {
    const { g, clock, intent, nowS, asked } = await signedBeforeGateway({ eth_chainId: '0x2105', eth_getTransactionCount: '0x7' })
    gw = g
    clock.advance(120_000)
    const later = { ...intent, constraints: { ...intent.constraints, deadline: nowS + 3600 } }
    const res = await g.app.inject({ method: 'POST', url: '/v1/tx/approve-request', payload: later })
    expect(res.statusCode, res.body).toBe(403)
    const body = res.json() as { error: string; reasons: string[] }
    expect(body.error).toBe('policy_denied')
    expect(body.reasons.join(' ')).toMatch(new RegExp(`^deadline ${nowS + 60} \\(.*\\) has passed: transaction ${TX_HASH} \\(nonce 7\\), signed before it and not mined, is not sent again`))
    expect(asked).toEqual([])
    const sent = await g.app.inject({ method: 'POST', url: '/v1/tx/sign-and-send', payload: { intent: later } })
    expect(sent.statusCode).toBe(403)
    expect((sent.json() as { reasons: string[] }).reasons).toEqual(body.reasons)
  })
})
