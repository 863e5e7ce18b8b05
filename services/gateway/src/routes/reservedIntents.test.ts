// An approval request holds its intent id: another body under that id is
// neither built nor signed while the request, or the token it may grant, can
// live; across a gateway restart too. Before, anyone reading a pending id
// signed a 0-amount intent under it first, and the approved intent met 409.
import { afterEach, describe, expect, it } from 'vitest'
import { approverMethods, noPreflight, signerMethods, type AuditLog, type TxIntent } from '@countersign/shared'
import { actions, makeIntent, WALLET } from '@countersign/shared/testing/intents'
import { makeTestGateway, testClock } from '../app.testkit.js'
import type { RunPreflight } from './approveRequest.js'

type Gw = Awaited<ReturnType<typeof makeTestGateway>>
let gw: Gw | undefined
afterEach(async () => {
  await gw?.close()
  gw = undefined
})

const TOKEN = '6f1c3d52-8a4e-4b7f-9d0e-2c5a1b3e4f60'
const HASH = `0x${'00'.repeat(32)}`

const cleanPreflight =
  (audit: AuditLog): RunPreflight =>
  async (intent) => ({
    findings: { ...noPreflight(), simulationSuccess: true, gasEstimate: '21000' },
    recorded: audit.append({ intentId: intent.id, event: 'preflight_completed', data: { simulationSuccess: true } }),
  })

/**
 * A gateway in web mode whose approver keeps every request pending until
 * `approve()` is called; the signer lists WALLET and records every other call
 * (a signature request would be one).
 */
async function webModeGateway(opts: { dataDir?: string; clock?: ReturnType<typeof testClock> } = {}) {
  let decided = false
  let asked = 0
  const signerCalls: string[] = []
  const g = await makeTestGateway({
    ...opts,
    policy: { requireApprovalAbove: { valueWei: '1' } },
    preflight: cleanPreflight,
    signer: async (method) => {
      if (method === signerMethods.accounts) return [{ address: WALLET, label: null, dev: false, unlocked: true, backend: 'keystore' }]
      signerCalls.push(method)
      throw new Error('this signer signs nothing')
    },
    approver: async (method) => {
      if (method === approverMethods.approvalUpdates) {
        return { cursor: 'c1', reset: false, outcomes: decided ? [{ approved: true, requestId: 'r-1', txRequestHash: HASH, approvalTokenId: TOKEN }] : [] }
      }
      asked += 1
      return { state: 'pending', requestId: 'r-1', txRequestHash: HASH, expiresAt: Date.now() + 300_000 }
    },
  })
  return { g, signerCalls, asked: () => asked, approve: () => void (decided = true) }
}

const post = (g: Gw, url: string, payload: object) => g.app.inject({ method: 'POST', url, payload })

/** The victim's 0.01 ETH transfer, and the attacker's 0 under the same id and wallet (policy allows it without approval). */
function victimAndZero(nowMs: number): { victim: TxIntent; zero: TxIntent } {
  // A deadline an hour away: the tests move the clock past the hold's 600 s.
  const victim = makeIntent({ action: actions.native('10000000000000000'), nowMs, deadline: Math.floor(nowMs / 1000) + 3600 })
  return { victim, zero: { ...victim, action: actions.native('0') } }
}

describe('an intent id held by its approval request', () => {
  it('a 0 amount under the id of a pending request is 409 intent_conflict at sign-and-send (nothing signed), build and approve-request; the victim\'s own body is not', async () => {
    const web = await webModeGateway()
    gw = web.g
    const { victim, zero } = victimAndZero(gw.clock())
    const waiting = post(gw, '/v1/tx/approve-request', victim)
    for (let i = 0; i < 200 && web.asked() === 0; i++) await new Promise((r) => setTimeout(r, 5))
    expect(web.asked()).toBe(1)

    const attack = await post(gw, '/v1/tx/sign-and-send', { intent: zero })
    expect(attack.statusCode).toBe(409)
    expect(attack.json()).toEqual({ error: 'intent_conflict', message: expect.stringContaining(`intent ${victim.id} is held by an approval request`) })
    expect(web.signerCalls).toEqual([])
    expect((await post(gw, '/v1/tx/build', zero)).statusCode).toBe(409)
    const again = await post(gw, '/v1/tx/approve-request', zero)
    expect(again.statusCode).toBe(409)
    expect(web.asked()).toBe(1)
    // Nothing of the attacker's reached the audit log (no policy record, no build): only the victim's request.
    expect(gw.audit.list({ limit: 20, intentId: victim.id }).reverse().map((e) => e.event)).toEqual(['preflight_completed', 'policy_evaluated', 'approve_request_created'])

    // The victim's intent itself goes on: it builds, and the operator's approval reaches the waiting call.
    expect((await post(gw, '/v1/tx/build', victim)).statusCode).toBe(200)
    web.approve()
    const approved = await waiting
    expect(approved.statusCode).toBe(200)
    expect(approved.json()).toMatchObject({ approved: true, approvalTokenId: TOKEN })
  })

  it('the hold survives a gateway restart and lasts while the request (300 s) and its token (300 s more) can live', async () => {
    const clock = testClock()
    const first = await webModeGateway({ clock })
    gw = first.g
    const { victim, zero } = victimAndZero(clock())
    const waiting = post(gw, '/v1/tx/approve-request', victim)
    for (let i = 0; i < 200 && first.asked() === 0; i++) await new Promise((r) => setTimeout(r, 5))
    first.approve()
    expect((await waiting).statusCode).toBe(200)
    const dataDir = gw.dataDir
    await gw.close()

    const restarted = await webModeGateway({ dataDir, clock })
    gw = restarted.g
    clock.advance(599_000)
    expect((await post(gw, '/v1/tx/sign-and-send', { intent: zero })).statusCode).toBe(409)
    expect((await post(gw, '/v1/tx/build', zero)).statusCode).toBe(409)
    expect(restarted.signerCalls).toEqual([])
    // Once no token for the request can be used any more, the id is free for another body (signing it is the signer's business).
    clock.advance(1_000)
    expect((await post(gw, '/v1/tx/build', zero)).statusCode).toBe(200)
  })

  it('an intent that needs no approval holds nothing: another body under its id is built as before', async () => {
    const web = await webModeGateway()
    gw = web.g
    const { zero, victim } = victimAndZero(gw.clock())
    const allowed = await post(gw, '/v1/tx/approve-request', zero)
    expect(allowed.json()).toMatchObject({ approved: true, approvalRequired: false })
    expect((await post(gw, '/v1/tx/build', victim)).statusCode).toBe(200)
    expect(web.asked()).toBe(0)
  })
})
