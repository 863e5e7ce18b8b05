// Every transition of an approval request and its token, with an injected
// clock: pending → approved / denied / expired / withdrawn; one request per
// intent; the caps; decisions kept for a client that went away; channels.
import { randomUUID } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { AuditWriteError, buildTransaction, defaultRouterTable, intentHash, noPreflight, openAuditLog, type ApprovalTicket, type AuditLog, type GrantParams, type TxIntent } from '@countersign/shared'
import { actions, makeIntent } from '@countersign/shared/testing/intents'
import { ApprovalRefusal, createApprovalService, DecisionError, type Granter } from './approvalService.js'
import { autoChannel } from './channels/autoChannel.js'
import { terminalChannel } from './channels/terminalChannel.js'
import { webChannel } from './channels/webChannel.js'
import { PendingRequests } from './requests/pendingRequests.js'

const routers = defaultRouterTable()
let audit: AuditLog | undefined
afterEach(async () => {
  await audit?.close()
  audit = undefined
})

function setup(opts: { mode?: 'web' | 'auto' | 'cli'; granter?: Granter; perWallet?: number; total?: number; wrapAudit?: (a: AuditLog) => AuditLog; onBackgroundError?: (err: Error) => void } = {}) {
  let now = Date.UTC(2026, 10, 22, 12)
  const clock = () => now
  const auditFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'cs-appr-')), 'audit.db')
  audit = openAuditLog(auditFile, { clock })
  const grants: GrantParams[] = []
  const granter: Granter = opts.granter ?? {
    grant: async (b) => {
      grants.push(b)
      return { approvalTokenId: randomUUID(), expiresAt: now + 300_000 }
    },
    durable: async () => undefined,
  }
  const pending = new PendingRequests(clock, { ttlMs: 300_000, perWallet: opts.perWallet ?? 5, total: opts.total ?? 500 })
  const service = createApprovalService({ mode: opts.mode ?? 'web', pending, granter, audit: opts.wrapAudit ? opts.wrapAudit(audit) : audit, routers, clock, ...(opts.onBackgroundError ? { onBackgroundError: opts.onBackgroundError } : {}) })
  const web = webChannel(clock)
  if (opts.mode === 'auto') service.addChannel(autoChannel())
  else service.addChannel(web)
  const intent = makeIntent({ action: actions.native('1000'), nowMs: now })
  const paramsOf = (i: TxIntent) => ({ intent: i, preflight: { ...noPreflight(), riskScore: 12, riskFactors: [{ id: 'x', weight: 12, detail: 'detail' }] }, policyReasons: ['value above threshold'] })
  // owner: what the gateway's skill runner sends for one submitIntent call.
  const request = (i: TxIntent = intent, owner?: string) => service.requestApproval({ ...paramsOf(i), ...(owner ? { owner } : {}) })
  const pendingTicket = async (i: TxIntent = intent, owner?: string) => {
    const t = await request(i, owner)
    if (t.state !== 'pending') throw new Error(`expected a pending ticket, got ${JSON.stringify(t)}`)
    return t
  }
  const events = () => audit!.list({ limit: 1000 }).map((e) => e.event).reverse()
  return { service, pending, web, intent, request, pendingTicket, grants, events, auditFile, advance: (ms: number) => (now += ms), clock }
}

/** A signer whose mint is held until release() (a token being minted while the test acts). */
function heldGranter(): { granter: Granter; release: () => void } {
  let finish: (() => void) | undefined
  const granter: Granter = {
    grant: () => new Promise((r) => (finish = () => r({ approvalTokenId: randomUUID(), expiresAt: Date.now() + 300_000 }))),
    durable: async () => undefined,
  }
  return {
    granter,
    release: () => {
      if (!finish) throw new Error('nothing is being minted')
      finish()
    },
  }
}

const until = async (check: () => boolean) => {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 5))
  if (!check()) throw new Error('timed out')
}

/** What the gateway's poll would learn from a cursor taken before. */
function endsSince(s: ReturnType<typeof setup>, cursor: string) {
  return s.service.updates(cursor).outcomes
}

describe('approval requests', () => {
  it('pending → approved: the token is minted for the hashes the approver derived itself (transaction and intent)', async () => {
    const s = setup()
    const cursor = s.service.updates(null).cursor
    const t = await s.pendingTicket()
    const p = s.pending.list()[0]!
    expect(p.requestId).toBe(t.requestId)
    expect(p.summary).toMatchObject({ riskScore: 12, recipient: s.intent.action.type === 'transfer_native' ? s.intent.action.to : null, preflightSource: 'no simulation' })
    expect(p.summary.action).toContain('Transfer 0.000000000000001 ETH')
    expect(await s.service.decide(p.requestId, true, 'web')).toEqual({ decided: true, requestId: p.requestId, approved: true })
    const [ended] = endsSince(s, cursor)
    expect(ended).toMatchObject({ approved: true, requestId: p.requestId, approvalTokenId: expect.any(String) })
    expect(s.grants).toEqual([{ txRequestHash: buildTransaction(s.intent, routers).txRequestHash, intentHash: intentHash(s.intent), intentId: s.intent.id }])
    expect(s.events()).toEqual(['approval_requested', 'approval_granted', 'web_approval_decided'])
    expect(s.pending.list()).toEqual([])
  })

  it('pending → denied', async () => {
    const s = setup()
    const cursor = s.service.updates(null).cursor
    const t = await s.pendingTicket()
    await s.service.decide(t.requestId, false, 'web')
    expect(endsSince(s, cursor)).toEqual([{ approved: false, requestId: t.requestId, txRequestHash: t.txRequestHash, reason: 'user_declined' }])
    expect(s.grants).toEqual([])
    expect(s.events()).toEqual(['approval_requested', 'approval_rejected', 'web_approval_decided'])
  })

  it('decide twice, decide an unknown id: not_found', async () => {
    const s = setup()
    const t = await s.pendingTicket()
    await s.service.decide(t.requestId, true, 'web')
    await expect(s.service.decide(t.requestId, false, 'web')).rejects.toMatchObject({ code: 'not_found' })
    await expect(s.service.decide(randomUUID(), true, 'web')).rejects.toBeInstanceOf(DecisionError)
  })

  it('pending → expired at 300 s: never listed or decidable after, even before the sweep; the gateway hears approval_expired', async () => {
    const s = setup()
    const cursor = s.service.updates(null).cursor
    const t = await s.pendingTicket()
    expect(t.expiresAt).toBe(s.clock() + 300_000)
    s.advance(299_999)
    expect(s.pending.list()).toHaveLength(1)
    s.advance(1)
    expect(s.pending.list()).toEqual([])
    await expect(s.service.decide(t.requestId, true, 'web')).rejects.toMatchObject({ code: 'not_found' })
    await s.service.sweep()
    expect(endsSince(s, cursor)).toEqual([expect.objectContaining({ approved: false, reason: 'approval_expired', requestId: t.requestId })])
    expect(s.events()).toContain('approval_expired')
    expect(s.grants).toEqual([])
    // Expiry is not a decision: the same intent asks the operator anew.
    const again = await s.pendingTicket()
    expect(again.requestId).not.toBe(t.requestId)
  })

  it('a grant whose announcement cannot be written leaves no token on record: the grant and the decision are one transaction', async () => {
    // Found by review: approval_granted (with the token id, public in the
    // history) was committed alone; when web_approval_decided then failed the
    // request went back on the list, the operator could deny it, and the
    // token on record stayed valid in the signer for its 300 s.
    const s = setup()
    const t = await s.pendingTicket()
    // A real failure inside SQLite, as a full disk would give: the insert of the second row aborts its transaction.
    const db = new Database(s.auditFile)
    db.exec(`CREATE TRIGGER test_disk_full BEFORE INSERT ON audit_events WHEN NEW.event = 'web_approval_decided' BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END`)
    await expect(s.service.decide(t.requestId, true, 'web')).rejects.toThrow(/disk is full/)
    expect(s.pending.get(t.requestId)).toBeDefined()
    expect(s.events()).toEqual(['approval_requested'])
    db.exec('DROP TRIGGER test_disk_full')
    db.close()
    await s.service.decide(t.requestId, false, 'web')
    expect(s.events()).toEqual(['approval_requested', 'approval_rejected', 'web_approval_decided'])
    // Minted once and never on record: it expires unused.
    expect(s.grants).toHaveLength(1)
  })

  it('a decision whose rows were committed but whose fsync failed is carried out, as the log shows it, and the error reaches the operator', async () => {
    // Found by review: approval_granted (its token id public in the history)
    // was committed, the grouped fsync then failed, and the request went back
    // on the list; the operator denied it and the token stayed valid.
    const unsynced = new Set(['approval_granted', 'approval_rejected'])
    const fsyncFailsAfterCommit = (log: AuditLog): AuditLog =>
      new Proxy(log, {
        get(target, key) {
          if (key === 'appendAll') {
            return async (events: Parameters<AuditLog['appendAll']>[0]) => {
              const written = await target.appendAll(events)
              if (events.some((e) => unsynced.has(e.event))) throw new AuditWriteError(`audit log fsync failed (${events.length} events of unknown durability): EIO`, 'EIO', true)
              return written
            }
          }
          const value = Reflect.get(target, key) as unknown
          return typeof value === 'function' ? value.bind(target) : value
        },
      })
    const s = setup({ wrapAudit: fsyncFailsAfterCommit })
    const cursor = s.service.updates(null).cursor
    const t = await s.pendingTicket()
    await expect(s.service.decide(t.requestId, true, 'web')).rejects.toThrow(/fsync failed/)
    expect(s.pending.get(t.requestId)).toBeUndefined()
    const granted = audit!.list({ limit: 10 }).find((e) => e.event === 'approval_granted')
    expect(endsSince(s, cursor)).toEqual([{ approved: true, requestId: t.requestId, txRequestHash: expect.any(String), approvalTokenId: granted?.data.tokenId }])
    await expect(s.service.decide(t.requestId, false, 'web')).rejects.toMatchObject({ code: 'not_found' })

    const other = await s.pendingTicket(makeIntent({ action: actions.native('2000') }))
    await expect(s.service.decide(other.requestId, false, 'web')).rejects.toThrow(/fsync failed/)
    expect(s.pending.get(other.requestId)).toBeUndefined()
    expect(endsSince(s, cursor).at(-1)).toMatchObject({ approved: false, requestId: other.requestId, reason: 'user_declined' })
    expect(s.grants).toHaveLength(1)
  })

  it('expiries and withdrawals the audit log refuses to record are kept and recorded by a later sweep; nothing rejects unobserved', async () => {
    let refuse = true
    const reported: string[] = []
    const s = setup({
      wrapAudit: (a) => ({
        ...a,
        append: (e, o) => (refuse && (e.event === 'approval_expired' || e.event === 'approval_withdrawn') ? Promise.reject(new Error('database or disk is full')) : a.append(e, o)),
      }),
      onBackgroundError: (err) => reported.push(err.message),
    })
    const first = await s.pendingTicket()
    const second = await s.pendingTicket(makeIntent({ action: actions.native('2000'), nowMs: s.clock() }))
    const stopped = makeIntent({ action: actions.native('3000'), nowMs: s.clock() })
    const run = randomUUID()
    const third = await s.pendingTicket(stopped, run)
    // A skill run stopped: withdrawn at once, its event written in the background.
    expect(s.service.withdrawOwn(run)).toBe(true)
    await until(() => reported.length === 1)
    expect(reported[0]).toBe('1 audit events (approval_withdrawn) are not in the audit log yet, retried at the next sweep (database or disk is full)')
    s.advance(300_000)
    await expect(s.service.sweep()).resolves.toBeUndefined()
    expect(reported[1]).toBe('3 audit events (approval_withdrawn, approval_expired) are not in the audit log yet, retried at the next sweep (database or disk is full)')
    expect(s.events().filter((e) => e === 'approval_expired' || e === 'approval_withdrawn')).toEqual([])
    // Still refused: kept, not doubled.
    await s.service.sweep()
    expect(reported[2]).toMatch(/^3 audit events/)
    refuse = false
    await s.service.sweep()
    const ended = audit!.list({ limit: 100 }).filter((e) => e.event === 'approval_expired' || e.event === 'approval_withdrawn')
    expect(ended.map((e) => `${e.event} ${String(e.data.requestId)}`).sort()).toEqual(
      [`approval_expired ${first.requestId}`, `approval_expired ${second.requestId}`, `approval_withdrawn ${third.requestId}`].sort(),
    )
    await s.service.sweep()
    expect(s.events().filter((e) => e === 'approval_expired' || e === 'approval_withdrawn')).toHaveLength(3)
    expect(reported).toHaveLength(3)
  })

  it('answers at once: requestApproval never waits for the operator', async () => {
    const s = setup()
    const started = Date.now()
    const t = await s.request()
    expect(t.state).toBe('pending')
    expect(Date.now() - started).toBeLessThan(1000)
  })

  it('one request per intent id: 15 concurrent asks of one intent make one request; a different body under that id is intent_conflict', async () => {
    const s = setup()
    const tickets = await Promise.all(Array.from({ length: 15 }, () => s.request()))
    expect(new Set(tickets.map((t) => (t as Extract<ApprovalTicket, { state: 'pending' }>).requestId)).size).toBe(1)
    expect(s.pending.list()).toHaveLength(1)
    expect(s.events().filter((e) => e === 'approval_requested')).toHaveLength(1)
    const other = { ...s.intent, constraints: { ...s.intent.constraints, maxGasWei: '999999999999999999' } }
    await expect(s.request(other)).rejects.toMatchObject({ reason: 'intent_conflict' })
    await expect(s.request(other)).rejects.toBeInstanceOf(ApprovalRefusal)
    // Attached callers share the decision.
    const cursor = s.service.updates(null).cursor
    await s.service.decide(s.pending.list()[0]!.requestId, true, 'web')
    expect(endsSince(s, cursor)).toHaveLength(1)
  })

  it('at most 5 pending per wallet and 500 in all: too_many_pending beyond', async () => {
    const s = setup()
    const wallet = (n: number) => `0x${n.toString(16).padStart(40, '0')}` as `0x${string}`
    for (let n = 0; n < 5; n++) await s.pendingTicket(makeIntent({ action: actions.native('1000'), wallet: wallet(1), nowMs: s.clock() }))
    await expect(s.request(makeIntent({ action: actions.native('1000'), wallet: wallet(1), nowMs: s.clock() }))).rejects.toMatchObject({ reason: 'too_many_pending', message: expect.stringContaining('at most 5') })
    // Another wallet is not affected.
    for (let w = 2; w < 101; w++) for (let n = 0; n < 5; n++) await s.pendingTicket(makeIntent({ action: actions.native('1000'), wallet: wallet(w), nowMs: s.clock() }))
    expect(s.pending.list()).toHaveLength(500)
    await expect(s.request(makeIntent({ action: actions.native('1000'), wallet: wallet(999), nowMs: s.clock() }))).rejects.toMatchObject({ reason: 'too_many_pending', message: expect.stringContaining('at most 500') })
    // A decided request frees its place.
    await s.service.decide(s.pending.list()[0]!.requestId, false, 'web')
    await s.pendingTicket(makeIntent({ action: actions.native('1000'), wallet: wallet(999), nowMs: s.clock() }))
  })

  it('a decision made while nobody waits is kept for the next ask of that intent, within the token lifetime', async () => {
    const s = setup()
    const t = await s.pendingTicket()
    await s.service.decide(t.requestId, true, 'web')
    const again = await s.request()
    expect(again).toMatchObject({ state: 'decided', outcome: { approved: true, requestId: t.requestId } })
    const token = again.state === 'decided' && again.outcome.approved ? again.outcome.approvalTokenId : ''
    expect(s.events().filter((e) => e === 'approval_granted')).toHaveLength(1)
    expect(s.grants).toHaveLength(1)
    // The same id with another body: a conflict, not the token.
    await expect(s.request({ ...s.intent, metadata: { note: 'changed' } })).rejects.toMatchObject({ reason: 'intent_conflict' })
    s.advance(299_999)
    expect(await s.request()).toMatchObject({ state: 'decided', outcome: { approvalTokenId: token } })
    s.advance(1)
    expect(await s.request()).toMatchObject({ state: 'pending' })

    // A denial is kept the same way.
    const d = setup()
    const dt = await d.pendingTicket()
    await d.service.decide(dt.requestId, false, 'web')
    expect(await d.request()).toMatchObject({ state: 'decided', outcome: { approved: false, reason: 'user_declined' } })
  })

  it('withdrawn (a stopped skill run): off the list, the gateway hears withdrawn', async () => {
    const s = setup()
    const cursor = s.service.updates(null).cursor
    const run = randomUUID()
    const t = await s.pendingTicket(s.intent, run)
    expect(s.service.withdrawOwn(run)).toBe(true)
    expect(s.service.withdrawOwn(run)).toBe(false)
    expect(endsSince(s, cursor)).toEqual([expect.objectContaining({ reason: 'withdrawn', requestId: t.requestId })])
    expect(s.pending.list()).toEqual([])
    await expect(s.service.decide(t.requestId, true, 'web')).rejects.toMatchObject({ code: 'not_found' })
    await new Promise((r) => setTimeout(r, 20))
    expect(s.events()).toContain('approval_withdrawn')
  })

  it('a stopped run withdraws only the request its own call created: not an agent’s it named by intent id, nor one it attached to', async () => {
    const s = setup()
    // An agent's request (no owner), and a skill call that sent the same intent: it attaches, and owns nothing.
    const agents = await s.pendingTicket()
    const attached = randomUUID()
    expect(await s.pendingTicket(s.intent, attached)).toMatchObject({ requestId: agents.requestId })
    expect(s.service.withdrawOwn(attached)).toBe(false)
    // Another run's call under the same id with its own body: a conflict, and nothing to withdraw either.
    const hijacker = randomUUID()
    await expect(s.request({ ...s.intent, metadata: { source: 'skill:hijacker' } }, hijacker)).rejects.toMatchObject({ reason: 'intent_conflict' })
    expect(s.service.withdrawOwn(hijacker)).toBe(false)
    // A request created by one run's call, then attached to by another call.
    const mine = makeIntent({ action: actions.native('2000'), nowMs: s.clock() })
    const creator = randomUUID()
    const created = await s.pendingTicket(mine, creator)
    const second = randomUUID()
    await s.pendingTicket(mine, second)
    expect(s.service.withdrawOwn(second)).toBe(false)
    expect(s.pending.list().map((p) => p.requestId)).toEqual([agents.requestId, created.requestId])
    expect(s.service.withdrawOwn(creator)).toBe(true)
    expect(s.pending.list().map((p) => p.requestId)).toEqual([agents.requestId])
    await new Promise((r) => setTimeout(r, 20))
    expect(s.events().filter((e) => e === 'approval_withdrawn')).toHaveLength(1)
  })

  it('an ask to replace a lost transaction does not attach to a waiting request for another purpose: that one is withdrawn (superseded) and the new card names the replacement', async () => {
    // Found by review: it attached to a waiting first-signature request; the operator
    // approved that card, and the signer refused its token for the replacement.
    const LOST = `0x${'ab'.repeat(32)}`
    const LOST_AGAIN = `0x${'cd'.repeat(32)}`
    const s = setup()
    const cursor = s.service.updates(null).cursor
    const replace = (lost: string) => s.service.requestApproval({ intent: s.intent, preflight: noPreflight(), policyReasons: ['lost transaction'], replacing: lost })
    const plain = await s.pendingTicket()
    const forReplacement = await replace(LOST)
    expect(forReplacement).toMatchObject({ state: 'pending' })
    if (forReplacement.state !== 'pending') throw new Error('expected pending')
    expect(forReplacement.requestId).not.toBe(plain.requestId)
    expect(s.pending.list()).toEqual([expect.objectContaining({ requestId: forReplacement.requestId, replacing: LOST })])
    expect(endsSince(s, cursor)).toEqual([expect.objectContaining({ reason: 'withdrawn', requestId: plain.requestId })])
    await expect(s.service.decide(plain.requestId, true, 'web')).rejects.toMatchObject({ code: 'not_found' })
    // The same replacement asked again attaches; a plain ask attaches to it too (it cannot use its token
    // for a first signature, and a signed intent answers a repeat with its stored signature).
    expect(await replace(LOST.toUpperCase().replace('0X', '0x'))).toEqual(forReplacement)
    expect(await s.request()).toEqual(forReplacement)
    // Another lost transaction supersedes it in turn.
    const third = await replace(LOST_AGAIN)
    if (third.state !== 'pending') throw new Error('expected pending')
    expect(s.pending.list()).toEqual([expect.objectContaining({ requestId: third.requestId, replacing: LOST_AGAIN })])
    expect(await s.service.decide(third.requestId, true, 'web')).toMatchObject({ decided: true, approved: true })
    expect(s.grants).toEqual([expect.objectContaining({ replacing: LOST_AGAIN })])
    await new Promise((r) => setTimeout(r, 20))
    const withdrawals = audit!.list({ limit: 100 }).filter((e) => e.event === 'approval_withdrawn')
    expect(withdrawals.map((e) => e.data).reverse()).toEqual([
      expect.objectContaining({ requestId: plain.requestId, reason: 'superseded' }),
      expect.objectContaining({ requestId: forReplacement.requestId, reason: 'superseded' }),
    ])
  })

  it('a request superseded while its approval_requested is being recorded is shown to nobody, and its caller hears it withdrawn (found by review)', async () => {
    let recorded: (() => void) | undefined
    const s = setup({
      wrapAudit: (a) => ({
        ...a,
        append: async (e, o) => {
          if (e.event === 'approval_requested' && !recorded) await new Promise<void>((r) => (recorded = r))
          return a.append(e, o)
        },
      }),
    })
    const shown: string[] = []
    s.service.addChannel({ name: 'spy', present: (r) => void shown.push(r.requestId), withdraw: () => undefined })
    const first = s.request()
    await until(() => recorded !== undefined)
    const [plain] = s.pending.list()
    const forReplacement = await s.service.requestApproval({ intent: s.intent, preflight: noPreflight(), policyReasons: ['lost transaction'], replacing: `0x${'ab'.repeat(32)}` })
    if (forReplacement.state !== 'pending') throw new Error('expected pending')
    recorded!()
    expect(await first).toMatchObject({ state: 'decided', outcome: { approved: false, reason: 'withdrawn', requestId: plain!.requestId } })
    expect(shown).toEqual([forReplacement.requestId])
  })

  it('an ask to replace that is refused (quorum_unavailable) leaves the waiting request as it was (found by review)', async () => {
    const s = setup()
    const plain = await s.pendingTicket()
    await expect(
      s.service.requestApproval({ intent: s.intent, preflight: noPreflight(), policyReasons: ['lost transaction'], replacing: `0x${'ab'.repeat(32)}`, quorum: 2 }),
    ).rejects.toMatchObject({ reason: 'quorum_unavailable' })
    expect(s.pending.list()).toEqual([expect.objectContaining({ requestId: plain.requestId, replacing: null })])
    expect(await s.service.decide(plain.requestId, true, 'web')).toMatchObject({ decided: true, approved: true })
  })

  it('an ask to replace takes the place of the request it supersedes under the per-wallet cap', async () => {
    const s = setup({ perWallet: 1 })
    await s.pendingTicket()
    const forReplacement = await s.service.requestApproval({ intent: s.intent, preflight: noPreflight(), policyReasons: ['lost transaction'], replacing: `0x${'ab'.repeat(32)}` })
    expect(forReplacement).toMatchObject({ state: 'pending' })
    expect(s.pending.list()).toHaveLength(1)
  })

  it('an ask to replace a lost transaction while a request for another purpose is being decided is intent_conflict, and that decision stands', async () => {
    const { granter: slow, release } = heldGranter()
    const s = setup({ granter: slow })
    const t = await s.pendingTicket()
    const deciding = s.service.decide(t.requestId, true, 'web')
    await expect(
      s.service.requestApproval({ intent: s.intent, preflight: noPreflight(), policyReasons: ['lost transaction'], replacing: `0x${'ab'.repeat(32)}` }),
    ).rejects.toMatchObject({ reason: 'intent_conflict', message: expect.stringMatching(/for its first signature that is being decided right now; ask again to replace 0xabab/) })
    release()
    expect(await deciding).toMatchObject({ decided: true, approved: true })
  })

  it('an ask that arrives while the token is being minted attaches to that request, not a new one', async () => {
    const { granter: slow, release } = heldGranter()
    const s = setup({ granter: slow })
    const t = await s.pendingTicket()
    const deciding = s.service.decide(t.requestId, true, 'web')
    expect(await s.request()).toMatchObject({ state: 'pending', requestId: t.requestId })
    release()
    await deciding
    expect(await s.request()).toMatchObject({ state: 'decided', outcome: { approved: true, requestId: t.requestId } })
    expect(s.events().filter((e) => e === 'approval_requested')).toHaveLength(1)
  })

  it('a decision taken while the request is still being recorded is waited for, not answered as withdrawn', async () => {
    const { granter: slow, release } = heldGranter()
    let recorded!: () => void
    const s = setup({
      granter: slow,
      wrapAudit: (a) => ({
        ...a,
        append: async (e, o) => {
          if (e.event === 'approval_requested') await new Promise<void>((r) => (recorded = r))
          return a.append(e, o)
        },
      }),
    })
    const asked = s.request()
    await new Promise((r) => setTimeout(r, 10))
    const [p] = s.pending.list()
    // The operator decides (the token is being minted) before approval_requested is committed.
    const deciding = s.service.decide(p!.requestId, true, 'web')
    recorded()
    expect(await asked).toMatchObject({ state: 'pending', requestId: p!.requestId })
    release()
    await deciding
    expect(await s.request()).toMatchObject({ state: 'decided', outcome: { approved: true, requestId: p!.requestId } })
  })

  it("an operator's approval is written, and its token handed on, only once the signer has the token on disk; a failed fsync there leaves the request pending", async () => {
    let durable!: { resolve: () => void; reject: (e: Error) => void }
    const held: Granter = {
      grant: async () => ({ approvalTokenId: randomUUID(), expiresAt: Date.now() + 300_000 }),
      durable: () => new Promise<void>((resolve, reject) => (durable = { resolve, reject })),
    }
    const s = setup({ granter: held })
    const cursor = s.service.updates(null).cursor
    const t = await s.pendingTicket()
    const first = s.service.decide(t.requestId, true, 'web')
    await new Promise((r) => setTimeout(r, 20))
    expect(s.events()).toEqual(['approval_requested'])
    expect(endsSince(s, cursor)).toEqual([])
    durable.reject(new Error('fdatasync of signer.db-wal failed'))
    await expect(first).rejects.toMatchObject({ code: 'signer_unavailable' })
    expect(s.pending.list().map((x) => x.requestId)).toEqual([t.requestId])
    const second = s.service.decide(t.requestId, true, 'web')
    await new Promise((r) => setTimeout(r, 20))
    expect(s.events()).toEqual(['approval_requested'])
    durable.resolve()
    await second
    expect(s.events()).toEqual(['approval_requested', 'approval_granted', 'web_approval_decided'])
    expect(endsSince(s, cursor)).toMatchObject([{ approved: true, requestId: t.requestId }])
  })

  it('a signer that cannot mint leaves the request pending', async () => {
    const s = setup({ granter: { grant: async () => Promise.reject(new Error('ECONNREFUSED')), durable: async () => undefined } })
    const t = await s.pendingTicket()
    await expect(s.service.decide(t.requestId, true, 'web')).rejects.toMatchObject({ code: 'signer_unavailable' })
    expect(s.pending.list().map((x) => x.requestId)).toEqual([t.requestId])
    // Still one request for the intent after the restore.
    expect(await s.request()).toMatchObject({ state: 'pending', requestId: t.requestId })
  })

  it('auto mode: the auto channel approves before requestApproval answers', async () => {
    const s = setup({ mode: 'auto' })
    const t = await s.request()
    expect(t).toMatchObject({ state: 'decided', outcome: { approved: true, approvalTokenId: expect.any(String) } })
    expect(s.pending.list()).toEqual([])
    expect(s.events()).toEqual(['approval_requested', 'approval_granted'])
  })
})

describe('approval channels', () => {
  it('the first decision wins and every other channel withdraws the request', async () => {
    const s = setup()
    const asked: Array<{ requestId: string; signal: AbortSignal }> = []
    s.service.addChannel(terminalChannel(s.service, (request, signal) => {
      asked.push({ requestId: request.requestId, signal })
      return new Promise<boolean>((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted'))))
    }))
    const pushed: Array<{ type: string; requestId?: string; end?: string }> = []
    s.web.subscribe({ readyState: 1, bufferedAmount: 0, send: (d) => pushed.push(JSON.parse(d)), terminate: () => undefined })
    const t = await s.pendingTicket()
    expect(asked.map((a) => a.requestId)).toEqual([t.requestId])
    expect(pushed.map((m) => m.type)).toEqual(['request'])
    await s.service.decide(t.requestId, true, 'web')
    expect(asked[0]!.signal.aborted).toBe(true)
    expect(pushed.at(-1)).toEqual({ type: 'ended', requestId: t.requestId, end: 'approved' })
  })

  it('the terminal channel decides with the operator’s answer, recorded as via terminal', async () => {
    const s = setup({ mode: 'cli' })
    // The operator types n: the prompt carries it out, as createTerminalPrompt does.
    s.service.addChannel(terminalChannel(s.service, async (_request, _signal, carryOut) => (await carryOut(false), false)))
    const cursor = s.service.updates(null).cursor
    await s.request()
    await new Promise((r) => setTimeout(r, 20))
    expect(endsSince(s, cursor)).toEqual([expect.objectContaining({ approved: false, reason: 'user_declined' })])
    expect(audit!.list({ limit: 10 }).find((e) => e.event === 'web_approval_decided')!.data).toMatchObject({ via: 'terminal', approved: false })
  })
})

describe('the decision feed (approvalUpdates)', () => {
  it('a cursor from another epoch (approver restarted) or from the future answers reset', async () => {
    const s = setup()
    expect(s.service.updates('0f6c1a2e-0000-4000-8000-000000000000.3')).toMatchObject({ reset: true, outcomes: [] })
    const { cursor } = s.service.updates(null)
    expect(s.service.updates(cursor.replace(/\.\d+$/, '.99'))).toMatchObject({ reset: true })
    expect(s.service.updates('garbage')).toMatchObject({ reset: true })
  })
})
