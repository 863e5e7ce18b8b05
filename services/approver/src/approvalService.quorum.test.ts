// Quorum (DESIGN §6): a request above requireQuorumAbove needs M distinct
// named operators; one denial denies; an operator voting twice counts once;
// every vote is audited by name; the token is minted only when the quorum is met.
import { randomUUID } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { defaultRouterTable, noPreflight, openAuditLog, type AuditLog, type GrantParams, type TxIntent } from '@countersign/shared'
import { actions, makeIntent } from '@countersign/shared/testing/intents'
import { ApprovalRefusal, createApprovalService, DecisionError } from './approvalService.js'
import type { ApprovalChannel } from './channels/channel.js'
import { pendingView } from './channels/pendingView.js'
import { PendingRequests, type PendingRequest } from './requests/pendingRequests.js'

let audit: AuditLog | undefined
afterEach(async () => {
  await audit?.close()
  audit = undefined
})

/**
 * The audit log, except that appends of the events `failing` names throw (a
 * full disk) while the set holds them; appendAll fails whole, as its one
 * transaction would.
 */
function failingAppends(log: AuditLog, failing: Set<string>): AuditLog {
  return new Proxy(log, {
    get(target, key) {
      if (key === 'append') {
        return async (e: Parameters<AuditLog['append']>[0]) => {
          if (failing.has(e.event)) throw new Error('SQLITE_FULL: database or disk is full')
          return target.append(e)
        }
      }
      if (key === 'appendAll') {
        return async (events: Parameters<AuditLog['appendAll']>[0]) => {
          if (events.some((e) => failing.has(e.event))) throw new Error('SQLITE_FULL: database or disk is full')
          return target.appendAll(events)
        }
      }
      const value = Reflect.get(target, key) as unknown
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
}

function setup(opts: { failGrants?: number; namedOperators?: number; failingEvents?: Set<string> } = {}) {
  const now = Date.UTC(2026, 10, 22, 12)
  let time = now
  const clock = () => time
  audit = openAuditLog(path.join(mkdtempSync(path.join(os.tmpdir(), 'cs-quorum-')), 'audit.db'), { clock })
  const grants: GrantParams[] = []
  let failures = opts.failGrants ?? 0
  const pending = new PendingRequests(clock, { ttlMs: 300_000, perWallet: 5, total: 500 })
  const service = createApprovalService({
    mode: 'web',
    pending,
    audit: opts.failingEvents ? failingAppends(audit, opts.failingEvents) : audit,
    routers: defaultRouterTable(),
    clock,
    granter: {
      grant: async (b) => {
        if (failures-- > 0) throw new Error('signer down')
        grants.push(b)
        return { approvalTokenId: randomUUID(), expiresAt: now + 300_000 }
      },
      durable: async () => undefined,
    },
    // Above 1000 wei: two operators (the policy's requireQuorumAbove, as main.ts wires it).
    quorumFor: (i) => (i.action.type === 'transfer_native' && BigInt(i.action.amount) > 1000n ? 2 : null),
    namedOperators: opts.namedOperators ?? 3,
  })
  const seen: string[] = []
  const channel: ApprovalChannel = {
    name: 'recorder',
    present: (r) => void seen.push(`present ${r.quorum?.approvedBy.length ?? '-'}`),
    withdraw: (_id, end) => void seen.push(`withdraw ${end}`),
    update: (r: PendingRequest) => void seen.push(`update ${pendingView(r, clock()).card.lines.find((l) => l.label === 'Quorum')?.value}`),
  }
  service.addChannel(channel)
  const request = async (i: TxIntent, quorum?: number) => {
    const t = await service.requestApproval({ intent: i, preflight: noPreflight(), policyReasons: ['above the quorum threshold'], ...(quorum ? { quorum } : {}) })
    if (t.state !== 'pending') throw new Error(`expected pending, got ${JSON.stringify(t)}`)
    return t
  }
  const rows = () => audit!.list({ limit: 1000 }).reverse()
  const big = makeIntent({ action: actions.native('1001'), nowMs: now })
  const setClock = (t: number) => void (time = t)
  return { service, pending, grants, seen, request, rows, big, now, setClock }
}

describe('quorum', () => {
  it('2 of 2: stays pending after one approval, the same operator twice counts once, approved by the second operator', async () => {
    const s = setup()
    const cursor = s.service.updates(null).cursor
    const t = await s.request(s.big)
    expect(pendingView(s.pending.get(t.requestId)!, s.now)).toMatchObject({ quorum: { required: 2, approvals: 0, approvedBy: [], remaining: 2 } })

    expect(await s.service.decide(t.requestId, true, 'web', 'alice')).toEqual({
      decided: false,
      requestId: t.requestId,
      approved: true,
      operator: 'alice',
      quorum: { required: 2, approvals: 1, approvedBy: ['alice'], remaining: 1 },
      counted: true,
    })
    expect(await s.service.decide(t.requestId, true, 'web', 'alice')).toMatchObject({ decided: false, counted: false, quorum: { approvals: 1, approvedBy: ['alice'] } })
    expect(s.grants).toEqual([])
    expect(s.service.updates(cursor).outcomes).toEqual([])
    expect(pendingView(s.pending.get(t.requestId)!, s.now).card.lines.at(-1)).toEqual({
      label: 'Quorum',
      value: '1 of 2 approvals (alice); 1 more needed from other named operators',
      kind: 'text',
    })

    expect(await s.service.decide(t.requestId, true, 'web', 'bob')).toMatchObject({ decided: true, approved: true, operator: 'bob', quorum: { approvals: 2, approvedBy: ['alice', 'bob'], remaining: 0 } })
    expect(s.grants).toHaveLength(1)
    expect(s.service.updates(cursor).outcomes).toEqual([expect.objectContaining({ approved: true, requestId: t.requestId })])
    expect(s.pending.list()).toEqual([])
    // The repeat vote showed nothing new.
    expect(s.seen).toEqual(['present 0', 'update 1 of 2 approvals (alice); 1 more needed from other named operators', 'withdraw approved'])

    const rows = s.rows()
    expect(rows.map((r) => r.event)).toEqual(['approval_requested', 'approval_vote', 'approval_vote', 'approval_vote', 'approval_granted', 'web_approval_decided'])
    expect(rows[0]!.data).toMatchObject({ quorum: 2 })
    expect(rows.filter((r) => r.event === 'approval_vote').map((r) => r.data)).toEqual([
      { intentId: s.big.id, requestId: t.requestId, action: expect.any(String), operator: 'alice', approved: true, counted: true, approvals: 1, required: 2, via: 'web' },
      { intentId: s.big.id, requestId: t.requestId, action: expect.any(String), operator: 'alice', approved: true, counted: false, approvals: 1, required: 2, via: 'web' },
      { intentId: s.big.id, requestId: t.requestId, action: expect.any(String), operator: 'bob', approved: true, counted: true, approvals: 2, required: 2, via: 'web' },
    ])
    expect(rows[4]!.data).toMatchObject({ operator: 'bob', approvedBy: ['alice', 'bob'] })
  })

  it('one denial by any operator ends it, even after approvals', async () => {
    const s = setup()
    const cursor = s.service.updates(null).cursor
    const t = await s.request(s.big)
    await s.service.decide(t.requestId, true, 'web', 'alice')
    expect(await s.service.decide(t.requestId, false, 'web', 'carol')).toMatchObject({ decided: true, approved: false, operator: 'carol' })
    expect(s.grants).toEqual([])
    expect(s.service.updates(cursor).outcomes).toEqual([expect.objectContaining({ approved: false, reason: 'user_declined' })])
    expect(s.rows().map((r) => r.event)).toEqual(['approval_requested', 'approval_vote', 'approval_vote', 'approval_rejected', 'web_approval_decided'])
    await expect(s.service.decide(t.requestId, true, 'web', 'bob')).rejects.toMatchObject({ code: 'not_found' })
  })

  it('an approval without a name (the terminal) is refused and not counted; a denial from it still ends the request', async () => {
    const s = setup()
    const t = await s.request(s.big)
    const err = await s.service.decide(t.requestId, true, 'terminal').catch((e: unknown) => e)
    expect(err).toBeInstanceOf(DecisionError)
    expect(err).toMatchObject({ code: 'operator_required', message: expect.stringContaining('needs 2 distinct named operators') })
    expect(s.pending.get(t.requestId)?.quorum?.approvedBy).toEqual([])
    expect(await s.service.decide(t.requestId, false, 'terminal')).toMatchObject({ decided: true, approved: false })
  })

  it('two last approvals at once mint one token', async () => {
    const s = setup()
    const t = await s.request(s.big)
    await s.service.decide(t.requestId, true, 'web', 'alice')
    const results = await Promise.allSettled([s.service.decide(t.requestId, true, 'web', 'bob'), s.service.decide(t.requestId, true, 'web', 'carol')])
    expect(s.grants).toHaveLength(1)
    expect(results.filter((r) => r.status === 'fulfilled' && r.value.decided)).toHaveLength(1)
  })

  it('the signer down when the quorum is met: the request stays pending with its votes, and the next vote carries it out', async () => {
    const s = setup({ failGrants: 1 })
    const t = await s.request(s.big)
    await s.service.decide(t.requestId, true, 'web', 'alice')
    await expect(s.service.decide(t.requestId, true, 'web', 'bob')).rejects.toMatchObject({ code: 'signer_unavailable' })
    expect(s.pending.get(t.requestId)?.quorum?.approvedBy).toEqual(['alice', 'bob'])
    expect(await s.service.decide(t.requestId, true, 'web', 'bob')).toMatchObject({ decided: true, approved: true })
    expect(s.grants).toHaveLength(1)
  })

  it('a vote the audit log could not record does not count, and the request stays pending', async () => {
    const failing = new Set(['approval_vote'])
    const s = setup({ failingEvents: failing })
    const t = await s.request(s.big)
    await expect(s.service.decide(t.requestId, true, 'web', 'alice')).rejects.toThrow(/disk is full/)
    expect(s.pending.get(t.requestId)?.quorum?.approvedBy).toEqual([])
    // A denial that cannot be recorded does not end the request either.
    await expect(s.service.decide(t.requestId, false, 'web', 'carol')).rejects.toThrow(/disk is full/)
    expect(s.pending.get(t.requestId)).toBeDefined()
    failing.clear()
    expect(await s.service.decide(t.requestId, true, 'web', 'alice')).toMatchObject({ decided: false, counted: true, quorum: { approvedBy: ['alice'] } })
    expect(await s.service.decide(t.requestId, true, 'web', 'bob')).toMatchObject({ decided: true, approved: true })
    expect(s.grants).toHaveLength(1)
    expect(s.rows().filter((r) => r.event === 'approval_vote').map((r) => (r.data as { operator: string }).operator)).toEqual(['alice', 'bob'])
  })

  it('a decision the audit log could not record is not announced: the request goes back on the list with its votes, and a later approval carries it out', async () => {
    const failing = new Set(['approval_granted', 'approval_rejected'])
    const s = setup({ failingEvents: failing })
    const cursor = s.service.updates(null).cursor
    const t = await s.request(s.big)
    await s.service.decide(t.requestId, true, 'web', 'alice')
    await expect(s.service.decide(t.requestId, true, 'web', 'bob')).rejects.toThrow(/disk is full/)
    expect(s.pending.get(t.requestId)?.quorum?.approvedBy).toEqual(['alice', 'bob'])
    expect(s.service.updates(cursor).outcomes).toEqual([])
    failing.clear()
    expect(await s.service.decide(t.requestId, true, 'web', 'bob')).toMatchObject({ decided: true, approved: true })
    expect(s.service.updates(cursor).outcomes).toHaveLength(1)
    expect(s.rows().filter((r) => r.event === 'approval_granted')).toHaveLength(1)
  })

  it('a vote that completed the quorum with another whose row then failed does not decide: the request goes back on the list with the one recorded vote', async () => {
    // Found by review: alice's vote counted while its row was being written,
    // bob's completed the quorum with it, alice's row failed and her vote was
    // taken back, and bob's went on to mint a token on his vote alone.
    const s = setup()
    const t = await s.request(s.big)
    let failAlicesRow!: (err: Error) => void
    const append = audit!.append.bind(audit)
    audit!.append = (e, o) =>
      e.event === 'approval_vote' && (e.data as { operator?: string }).operator === 'alice'
        ? new Promise((_resolve, reject) => (failAlicesRow = reject))
        : append(e, o)
    const alice = s.service.decide(t.requestId, true, 'web', 'alice')
    const bob = s.service.decide(t.requestId, true, 'web', 'bob')
    failAlicesRow(new Error('SQLITE_FULL: database or disk is full'))
    await expect(alice).rejects.toThrow(/disk is full/)
    expect(await bob).toMatchObject({ decided: false, counted: true, quorum: { approvedBy: ['bob'] } })
    expect(s.grants).toHaveLength(0)
    expect(s.rows().filter((r) => r.event === 'approval_granted')).toEqual([])
    expect(s.pending.get(t.requestId)?.quorum?.approvedBy).toEqual(['bob'])
    audit!.append = append
    expect(await s.service.decide(t.requestId, true, 'web', 'alice')).toMatchObject({ decided: true, approved: true })
    expect(s.grants).toHaveLength(1)
    expect(s.rows().find((r) => r.event === 'approval_granted')?.data).toMatchObject({ approvedBy: ['bob', 'alice'] })
  })

  it('a vote whose row is written while its request is withdrawn or expires does not show the card again', async () => {
    // Found by review: the vote's channel update ran after the request had
    // ended, so `countersign-approve watch` showed it pending again and a
    // decision on it answered 404.
    for (const ending of ['withdrawn', 'expired'] as const) {
      const s = setup()
      const t = await s.service.requestApproval({ intent: s.big, preflight: noPreflight(), policyReasons: ['above the quorum threshold'], owner: 'run-1' })
      if (t.state !== 'pending') throw new Error(`expected pending, got ${JSON.stringify(t)}`)
      let finishRow!: () => void
      const append = audit!.append.bind(audit)
      audit!.append = (e, o) =>
        e.event === 'approval_vote' ? new Promise<void>((resolve) => (finishRow = resolve)).then(() => append(e, o)) : append(e, o)
      const alice = s.service.decide(t.requestId, true, 'web', 'alice')
      if (ending === 'withdrawn') expect(s.service.withdrawOwn('run-1')).toBe(true)
      else {
        s.setClock(s.now + 300_001)
        await s.service.sweep()
      }
      finishRow()
      expect(await alice).toMatchObject({ decided: false, counted: true })
      expect(s.seen).toEqual(['present 0', `withdraw ${ending}`])
      expect(s.pending.list()).toEqual([])
      audit!.append = append
      await audit!.close()
      audit = undefined
    }
  })

  it('below the figure a single approval decides as before, and nothing of the quorum shows', async () => {
    const s = setup()
    const t = await s.request(makeIntent({ action: actions.native('1000'), nowMs: s.now }))
    expect('quorum' in pendingView(s.pending.get(t.requestId)!, s.now)).toBe(false)
    expect(await s.service.decide(t.requestId, true, 'web', 'alice')).toEqual({ decided: true, requestId: t.requestId, approved: true, operator: 'alice' })
    expect(s.rows().map((r) => r.event)).toEqual(['approval_requested', 'approval_granted', 'web_approval_decided'])
  })

  it("the gateway's quorum counts when the approver's own policy asks for less (a policy file missing on one side never lowers it)", async () => {
    const s = setup()
    const t = await s.request(makeIntent({ action: actions.native('5'), nowMs: s.now }), 3)
    expect(s.pending.get(t.requestId)?.quorum?.required).toBe(3)
    // …and the approver's own when the gateway asks for less.
    const u = await s.request(s.big, undefined)
    expect(s.pending.get(u.requestId)?.quorum?.required).toBe(2)
  })

  it('a quorum the approver cannot gather is refused at once (quorum_unavailable), never shown with fewer operators', async () => {
    const s = setup({ namedOperators: 2 })
    const err = await s.request(makeIntent({ action: actions.native('5'), nowMs: s.now }), 3).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(ApprovalRefusal)
    expect(err).toMatchObject({ reason: 'quorum_unavailable', message: expect.stringContaining('needs 3 distinct named operators') })
    expect(s.pending.list()).toEqual([])
    const single = setup({ namedOperators: 0 })
    await expect(single.request(single.big)).rejects.toMatchObject({ reason: 'quorum_unavailable', message: expect.stringContaining('no named operators') })
  })
})
