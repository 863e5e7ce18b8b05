// Auto mode (a channel that approves at once): the token is minted first, then
// approval_requested and approval_granted are committed together, in that
// order, in one audit transaction; nothing is answered before that commit
// and the signer's fsync of the token (the rows' own fsync may follow);
// a signer that cannot mint refuses the request at once (nobody else would
// decide it) and leaves nothing behind; a commit that fails leaves no request
// behind (in auto mode and when presented).
import { randomUUID } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { buildTransaction, defaultRouterTable, intentHash, noPreflight, openAuditLog, type AuditLog, type GrantParams, type GrantResult, type TxIntent } from '@countersign/shared'
import { actions, makeIntent } from '@countersign/shared/testing/intents'
import { createApprovalService } from './approvalService.js'
import { autoChannel } from './channels/autoChannel.js'
import { PendingRequests } from './requests/pendingRequests.js'

const routers = defaultRouterTable()
let audit: AuditLog | undefined
afterEach(async () => {
  await audit?.close()
  audit = undefined
})

interface Gate {
  /** Every append's commit held back (answered when released, in order). */
  closed: boolean
  held: Array<() => void>
  /** Events whose commit fails (a full disk). */
  failing: Set<string>
  /** appendOrdered: the commit goes through, its fsync is held back (released from `fsyncs`). */
  fsyncHeld: boolean
  fsyncs: Array<() => void>
  /** appendOrdered: the commit goes through, its fsync fails. */
  fsyncFails: boolean
}

const holdIn = <T>(p: Promise<T>, queue: Array<() => void>) => new Promise<T>((resolve, reject) => queue.push(() => void p.then(resolve, reject)))

/** The audit log with its commits and fsyncs held back or failing as `gate` says. */
function gatedAppends(log: AuditLog, gate: Gate): AuditLog {
  const full = () => new Error('SQLITE_FULL: database or disk is full')
  return new Proxy(log, {
    get(target, key) {
      if (key === 'append') {
        return (e: Parameters<AuditLog['append']>[0]) => {
          if (gate.failing.has(e.event)) return Promise.reject(full())
          const committed = target.append(e)
          return gate.closed ? holdIn(committed, gate.held) : committed
        }
      }
      if (key === 'appendOrdered') {
        return (e: Parameters<AuditLog['appendOrdered']>[0]): ReturnType<AuditLog['appendOrdered']> => {
          if (gate.failing.has(e.event)) {
            const failed = Promise.reject(full())
            return { ordered: failed.then(() => undefined), durable: failed }
          }
          let { ordered, durable } = target.appendOrdered(e)
          if (gate.fsyncFails)
            durable = durable.then(() => {
              throw new Error('fdatasync of audit.db-wal failed: EIO')
            })
          else if (gate.fsyncHeld) durable = holdIn(durable, gate.fsyncs)
          if (gate.closed) {
            ordered = holdIn(ordered, gate.held)
            durable = holdIn(durable, gate.held)
          }
          return { ordered, durable }
        }
      }
      const value = Reflect.get(target, key) as unknown
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
}

function setup(opts: { auto?: boolean } = {}) {
  const now = Date.UTC(2026, 10, 22, 12)
  const clock = () => now
  const log = openAuditLog(path.join(mkdtempSync(path.join(os.tmpdir(), 'cs-auto-')), 'audit.db'), { clock })
  audit = log
  const gate: Gate = { closed: false, held: [], failing: new Set<string>(), fsyncHeld: false, fsyncs: [], fsyncFails: false }
  const grants: Array<{ params: GrantParams; approvalRowsAtMint: number; result: GrantResult }> = []
  const backgroundErrors: Error[] = []
  let signerDown = false
  let grantGate: Promise<void> | null = null
  // The signer's fsync of the tokens minted so far (grantsDurable): held back or failing.
  const tokenFsync = { held: [] as Array<() => void>, hold: false, fails: false, calls: 0 }
  const approvalRows = () => log.list({ limit: 1000 }).filter((e) => e.event.startsWith('approval_')).length
  const pending = new PendingRequests(clock, { ttlMs: 300_000, perWallet: 5, total: 500 })
  const service = createApprovalService({
    mode: opts.auto === false ? 'web' : 'auto',
    pending,
    audit: gatedAppends(log, gate),
    routers,
    clock,
    granter: {
      grant: async (params) => {
        if (grantGate) await grantGate
        if (signerDown) throw new Error('connect ECONNREFUSED grant.sock')
        const result = { approvalTokenId: randomUUID(), expiresAt: now + 300_000 }
        grants.push({ params, approvalRowsAtMint: approvalRows(), result })
        return result
      },
      durable: async () => {
        tokenFsync.calls += 1
        if (tokenFsync.hold) await new Promise<void>((r) => tokenFsync.held.push(r))
        if (tokenFsync.fails) throw new Error('fdatasync of signer.db-wal failed: EIO')
      },
    },
    onBackgroundError: (err) => backgroundErrors.push(err),
  })
  if (opts.auto !== false) service.addChannel(autoChannel())
  const intent = makeIntent({ action: actions.native('1000'), nowMs: now })
  const request = (i: TxIntent = intent) => service.requestApproval({ intent: i, preflight: { ...noPreflight(), riskScore: 7 }, policyReasons: ['value above threshold'] })
  const rows = () => log.list({ limit: 1000 }).reverse()
  return {
    service,
    pending,
    log,
    gate,
    grants,
    intent,
    request,
    rows,
    tokenFsync,
    backgroundErrors,
    signer: (down: boolean) => (signerDown = down),
    holdGrants: () => {
      let release!: () => void
      grantGate = new Promise<void>((r) => (release = r))
      return () => {
        grantGate = null
        release()
      }
    },
  }
}

const settled = () => new Promise((r) => setTimeout(r, 20))

describe('auto mode', () => {
  it('mints the token, then commits approval_requested and approval_granted together, in that order, in one transaction', async () => {
    const s = setup()
    const commitsBefore = s.log.commits
    const t = await s.request()
    expect(t.state).toBe('decided')
    if (t.state !== 'decided' || !t.outcome.approved) throw new Error('expected an approval')
    const [grant] = s.grants
    expect(s.grants).toHaveLength(1)
    expect(grant!.params).toEqual({ txRequestHash: buildTransaction(s.intent, routers).txRequestHash, intentHash: intentHash(s.intent), intentId: s.intent.id })
    // The token was durable in the signer before either row was written.
    expect(grant!.approvalRowsAtMint).toBe(0)
    expect(s.log.commits - commitsBefore).toBe(1)
    const [requested, granted] = s.rows()
    expect(requested).toMatchObject({ event: 'approval_requested', intentId: s.intent.id, data: { requestId: t.outcome.requestId, mode: 'auto', riskScore: 7 } })
    expect(granted).toMatchObject({ event: 'approval_granted', intentId: s.intent.id, data: { requestId: t.outcome.requestId, tokenId: grant!.result.approvalTokenId, via: 'auto', riskScore: 7 } })
    expect(s.rows()).toHaveLength(2)
    expect(t.outcome).toEqual({ approved: true, requestId: requested!.data.requestId, txRequestHash: grant!.params.txRequestHash, approvalTokenId: grant!.result.approvalTokenId })
    expect(s.pending.list()).toEqual([])
    // The decision is kept: the same intent again gets the same token at once, with no second mint or row.
    expect(await s.request()).toEqual(t)
    expect(s.grants).toHaveLength(1)
    expect(s.rows()).toHaveLength(2)
  })

  it('answers only after the commit of both rows', async () => {
    const s = setup()
    s.gate.closed = true
    let answered = false
    const asked = s.request().then((t) => {
      answered = true
      return t
    })
    await settled()
    expect(s.grants).toHaveLength(1)
    expect(answered).toBe(false)
    s.gate.closed = false
    for (const release of s.gate.held.splice(0)) release()
    expect(await asked).toMatchObject({ state: 'decided', outcome: { approved: true } })
    expect(s.rows().map((e) => e.event)).toEqual(['approval_requested', 'approval_granted'])
  })

  it("answers once the rows are committed, before their fsync (the gateway's next commit makes them durable first); the fsync still follows", async () => {
    const s = setup()
    s.gate.fsyncHeld = true
    const t = await s.request()
    expect(t).toMatchObject({ state: 'decided', outcome: { approved: true } })
    expect(s.rows().map((e) => e.event)).toEqual(['approval_requested', 'approval_granted'])
    expect(s.gate.fsyncs).toHaveLength(2)
    for (const release of s.gate.fsyncs.splice(0)) release()
    await settled()
    expect(s.backgroundErrors).toEqual([])
  })

  it('an fsync of the rows that fails after the answer is reported (onBackgroundError)', async () => {
    const s = setup()
    s.gate.fsyncFails = true
    expect(await s.request()).toMatchObject({ state: 'decided', outcome: { approved: true } })
    await settled()
    expect(s.backgroundErrors.map((e) => e.message)).toEqual(['fdatasync of audit.db-wal failed: EIO'])
  })

  it('hands the token on only once the signer has it on disk, waiting for that while the rows commit', async () => {
    const s = setup()
    s.tokenFsync.hold = true
    let answered = false
    const asked = s.request().then((t) => {
      answered = true
      return t
    })
    await settled()
    expect(s.tokenFsync.calls).toBe(1)
    // The rows did not wait for the token's fsync; the answer does.
    expect(s.rows().map((e) => e.event)).toEqual(['approval_requested', 'approval_granted'])
    expect(answered).toBe(false)
    for (const release of s.tokenFsync.held.splice(0)) release()
    expect(await asked).toMatchObject({ state: 'decided', outcome: { approved: true } })
  })

  it("a token the signer could not fsync is not handed on: signer_unavailable, and whoever attached hears the request withdrawn", async () => {
    const s = setup()
    const cursor = s.service.updates(null).cursor
    s.tokenFsync.hold = true
    s.tokenFsync.fails = true
    const first = s.request()
    await settled()
    const attached = await s.request()
    if (attached.state !== 'pending') throw new Error('expected the second call to attach')
    for (const release of s.tokenFsync.held.splice(0)) release()
    await expect(first).rejects.toMatchObject({ reason: 'signer_unavailable', message: expect.stringMatching(/fdatasync of signer\.db-wal failed/) })
    const outcomes = s.service.updates(cursor).outcomes
    expect(outcomes).toEqual([{ approved: false, requestId: attached.requestId, txRequestHash: attached.txRequestHash, reason: 'withdrawn' }])
    expect(outcomes.some((o) => o.approved)).toBe(false)
    expect(s.pending.list()).toEqual([])
    await settled()
    expect(s.rows().map((e) => [e.event, e.data.reason])).toEqual([
      ['approval_requested', undefined],
      ['approval_granted', undefined],
      ['approval_withdrawn', 'token_not_durable'],
    ])
  })

  it('a token fsync that fails while the rows are still committing is refused the same way, with nothing unhandled', async () => {
    const s = setup()
    s.gate.closed = true
    s.tokenFsync.fails = true
    const first = s.request()
    await settled()
    expect(s.tokenFsync.calls).toBe(1)
    for (const release of s.gate.held.splice(0)) release()
    await expect(first).rejects.toMatchObject({ reason: 'signer_unavailable' })
    expect(s.pending.list()).toEqual([])
  })

  it('the same intent asked again while its token is being minted attaches to the request and hears its approval', async () => {
    const s = setup()
    const cursor = s.service.updates(null).cursor
    const release = s.holdGrants()
    const first = s.request()
    await settled()
    const second = await s.request()
    expect(second).toMatchObject({ state: 'pending' })
    release()
    const t = await first
    if (t.state !== 'decided' || second.state !== 'pending') throw new Error('unexpected tickets')
    expect(second.requestId).toBe(t.outcome.requestId)
    expect(s.service.updates(cursor).outcomes).toEqual([t.outcome])
    expect(s.grants).toHaveLength(1)
  })

  it('a signer that cannot mint refuses the request at once (signer_unavailable): nothing on the list, nothing in the log, whoever attached hears it withdrawn; asked again once the signer is back, it is approved', async () => {
    const s = setup()
    const cursor = s.service.updates(null).cursor
    s.signer(true)
    const release = s.holdGrants()
    const first = s.request()
    await settled()
    const attached = await s.request()
    release()
    await expect(first).rejects.toMatchObject({ reason: 'signer_unavailable', message: expect.stringMatching(/signer could not issue an approval token \(connect ECONNREFUSED grant\.sock\); nothing was approved/) })
    if (attached.state !== 'pending') throw new Error('expected the second call to attach')
    expect(s.service.updates(cursor).outcomes).toEqual([{ approved: false, requestId: attached.requestId, txRequestHash: attached.txRequestHash, reason: 'withdrawn' }])
    expect(s.pending.list()).toEqual([])
    expect(s.rows()).toEqual([])
    s.signer(false)
    const again = await s.request()
    expect(again).toMatchObject({ state: 'decided', outcome: { approved: true } })
    expect(s.rows().map((e) => e.event)).toEqual(['approval_requested', 'approval_granted'])
  })

  it('a commit that fails leaves no request: the caller gets the error, whoever attached hears it withdrawn, and asking again starts afresh', async () => {
    const s = setup()
    const cursor = s.service.updates(null).cursor
    s.gate.failing.add('approval_requested').add('approval_granted')
    const release = s.holdGrants()
    const first = s.request()
    await settled()
    const attached = await s.request()
    release()
    await expect(first).rejects.toThrow(/SQLITE_FULL/)
    if (attached.state !== 'pending') throw new Error('expected the second call to attach')
    expect(s.service.updates(cursor).outcomes).toEqual([{ approved: false, requestId: attached.requestId, txRequestHash: attached.txRequestHash, reason: 'withdrawn' }])
    expect(s.rows()).toEqual([])
    expect(s.pending.list()).toEqual([])
    s.gate.failing.clear()
    const again = await s.request()
    expect(again).toMatchObject({ state: 'decided', outcome: { approved: true } })
    if (again.state !== 'decided') throw new Error('expected a decision')
    expect(again.outcome.requestId).not.toBe(attached.requestId)
    expect(s.rows().map((e) => e.event)).toEqual(['approval_requested', 'approval_granted'])
  })
})

describe('signing an intent again after its transaction was lost (requestApproval replacing)', () => {
  const LOST = `0x${'ab'.repeat(32)}`
  const LOST_AGAIN = `0x${'cd'.repeat(32)}`
  const replacing = (s: ReturnType<typeof setup>, lost: string) =>
    s.service.requestApproval({ intent: s.intent, preflight: { ...noPreflight(), riskScore: 7 }, policyReasons: ['lost transaction'], replacing: lost })

  it('passes over the approval kept from before (its token went into the lost transaction) and has a new one granted, once per lost transaction', async () => {
    const s = setup()
    const first = await s.request()
    if (first.state !== 'decided' || !first.outcome.approved) throw new Error('expected an approval')
    // A plain retry still gets the kept decision: the intent may well be mined.
    expect(await s.request()).toEqual(first)
    expect(s.grants).toHaveLength(1)

    const again = await replacing(s, LOST)
    if (again.state !== 'decided' || !again.outcome.approved) throw new Error('expected a new approval')
    expect(again.outcome.approvalTokenId).not.toBe(first.outcome.approvalTokenId)
    expect(again.outcome.requestId).not.toBe(first.outcome.requestId)
    expect(s.grants).toHaveLength(2)
    const requested = s.rows().filter((e) => e.event === 'approval_requested')
    expect(requested).toHaveLength(2)
    expect(requested[1]!.data).toMatchObject({ requestId: again.outcome.requestId, replacing: LOST })
    expect(requested[0]!.data).not.toHaveProperty('replacing')
    // The token is minted for that replacement: the signer takes it for that one and for nothing else.
    expect(s.grants[1]!.params).toMatchObject({ replacing: LOST })
    expect(s.grants[0]!.params).not.toHaveProperty('replacing')

    // The same replacement asked again (a client's retry) gets the approval given for it; no third token.
    expect(await replacing(s, LOST)).toEqual(again)
    expect(await s.request()).toEqual(again)
    expect(s.grants).toHaveLength(2)
    // The replacement lost in its turn: asked again once more.
    const third = await replacing(s, LOST_AGAIN)
    if (third.state !== 'decided' || !third.outcome.approved) throw new Error('expected a third approval')
    expect(s.grants).toHaveLength(3)
  })

  it('still answers with a refusal kept for the intent, and still refuses another body under the id', async () => {
    const s = setup({ auto: false })
    const ticket = await s.request()
    if (ticket.state !== 'pending') throw new Error('expected a pending request')
    await s.service.decide(ticket.requestId, false, 'web')
    const declined = await replacing(s, LOST)
    expect(declined).toMatchObject({ state: 'decided', outcome: { approved: false, reason: 'user_declined', requestId: ticket.requestId } })
    await expect(
      s.service.requestApproval({ intent: { ...s.intent, metadata: { source: 'another body' } }, preflight: noPreflight(), policyReasons: [], replacing: LOST }),
    ).rejects.toMatchObject({ reason: 'intent_conflict' })
  })
})

describe('a request the audit log does not hold', () => {
  it('presented to operators: a failed approval_requested commit takes it off the list, so nobody can decide it, and asking again starts afresh', async () => {
    const s = setup({ auto: false })
    const cursor = s.service.updates(null).cursor
    s.gate.failing.add('approval_requested')
    await expect(s.request()).rejects.toThrow(/SQLITE_FULL/)
    expect(s.pending.list()).toEqual([])
    const [ended] = s.service.updates(cursor).outcomes
    expect(ended).toMatchObject({ approved: false, reason: 'withdrawn' })
    await expect(s.service.decide(ended!.requestId, true, 'web')).rejects.toMatchObject({ code: 'not_found' })
    s.gate.failing.clear()
    const again = await s.request()
    expect(again).toMatchObject({ state: 'pending' })
    if (again.state !== 'pending') throw new Error('expected pending')
    expect(again.requestId).not.toBe(ended!.requestId)
    expect(s.rows().map((e) => e.event)).toEqual(['approval_requested'])
    expect(s.grants).toEqual([])
  })

})
