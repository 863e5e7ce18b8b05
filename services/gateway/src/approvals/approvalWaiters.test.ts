// The gateway's waiting room for approve-request callers, against a small
// in-memory approver that speaks the two socket methods.
import { describe, expect, it } from 'vitest'
import { APPROVAL_REFUSED, approverMethods, RpcError, type ApprovalOutcome, type ApprovalTicket, type ApprovalUpdates } from '@countersign/shared'
import { createApprovalWaiters, type ApproverCaller, type PendingTicket } from './approvalWaiters.js'

function fakeApprover() {
  let epoch = 'e1'
  const ends: ApprovalOutcome[] = []
  const calls: string[] = []
  const caller: ApproverCaller = {
    async call<T>(method: string, params: unknown): Promise<T> {
      calls.push(method)
      if (method !== approverMethods.approvalUpdates) throw new Error(`unexpected ${method}`)
      const { cursor } = params as { cursor: string | null }
      const here = `${epoch}.${ends.length}`
      if (cursor === null) return { cursor: here, reset: false, outcomes: [] } satisfies ApprovalUpdates as T
      const [e, n] = cursor.split('.')
      if (e !== epoch) return { cursor: here, reset: true, outcomes: [] } satisfies ApprovalUpdates as T
      return { cursor: here, reset: false, outcomes: ends.slice(Number(n)) } satisfies ApprovalUpdates as T
    },
  }
  return {
    caller,
    calls,
    end: (o: ApprovalOutcome) => ends.push(o),
    restart: () => {
      epoch = `e${Number(epoch.slice(1)) + 1}`
      ends.length = 0
    },
  }
}

const ticket = (requestId: string, ttlMs = 60_000): PendingTicket => ({ state: 'pending', requestId, txRequestHash: '0xabc', expiresAt: Date.now() + ttlMs })
const approved = (requestId: string): ApprovalOutcome => ({ approved: true, requestId, txRequestHash: '0xabc', approvalTokenId: `token-${requestId}` })
const never = async (): Promise<ApprovalTicket> => {
  throw new Error('not expected')
}

describe('approval waiters', () => {
  it('every caller waiting on a request gets its end from one poll', async () => {
    const a = fakeApprover()
    const w = createApprovalWaiters({ approver: a.caller, clock: Date.now, pollMs: 10 })
    await w.ready()
    const waits = [w.wait(ticket('r1'), never), w.wait(ticket('r1'), never), w.wait(ticket('r2'), never)]
    expect(w.waiting).toBe(3)
    a.end(approved('r1'))
    a.end({ approved: false, requestId: 'r2', txRequestHash: '0xabc', reason: 'user_declined' })
    const [x, y, z] = await Promise.all(waits)
    expect(x).toEqual(approved('r1'))
    expect(y).toEqual(approved('r1'))
    expect(z).toMatchObject({ approved: false, reason: 'user_declined' })
    expect(w.waiting).toBe(0)
    w.close()
  })

  it('10,000 waiting callers cost one short call per poll, not one call each', async () => {
    const a = fakeApprover()
    const w = createApprovalWaiters({ approver: a.caller, clock: Date.now, pollMs: 20 })
    await w.ready()
    const waits = Array.from({ length: 10_000 }, (_, n) => w.wait(ticket(`r${n}`), never))
    await new Promise((r) => setTimeout(r, 200))
    const polls = a.calls.filter((c) => c === approverMethods.approvalUpdates).length
    expect(polls).toBeLessThan(20)
    for (let n = 0; n < 10_000; n++) a.end(approved(`r${n}`))
    const all = await Promise.all(waits)
    expect(all.every((o, n) => o?.requestId === `r${n}`)).toBe(true)
    w.close()
  })

  it('an end that arrived before the caller registered is still delivered', async () => {
    const a = fakeApprover()
    const w = createApprovalWaiters({ approver: a.caller, clock: Date.now, pollMs: 10 })
    await w.ready()
    const other = w.wait(ticket('keep-polling'), never)
    a.end(approved('early'))
    await new Promise((r) => setTimeout(r, 50))
    expect(await w.wait(ticket('early'), never)).toEqual(approved('early'))
    a.end(approved('keep-polling'))
    await other
    w.close()
  })

  it('a caller that goes away stops waiting (null) and nothing is withdrawn', async () => {
    const a = fakeApprover()
    const w = createApprovalWaiters({ approver: a.caller, clock: Date.now, pollMs: 10 })
    await w.ready()
    const gone = new AbortController()
    const waiting = w.wait(ticket('r1'), never, gone.signal)
    gone.abort()
    expect(await waiting).toBeNull()
    expect(w.waiting).toBe(0)
    expect(a.calls.every((c) => c === approverMethods.approvalUpdates)).toBe(true)
    w.close()
  })

  it('after an approver restart (reset) each request is asked for again and followed under its new id', async () => {
    const a = fakeApprover()
    const w = createApprovalWaiters({ approver: a.caller, clock: Date.now, pollMs: 10 })
    await w.ready()
    let resent = 0
    const waiting = w.wait(ticket('old'), async () => {
      resent++
      return ticket('new')
    })
    a.restart()
    await new Promise((r) => setTimeout(r, 60))
    expect(resent).toBe(1)
    a.end(approved('new'))
    expect(await waiting).toEqual(approved('new'))
    w.close()
  })

  it('a request the restarted approver refuses (auto mode, signer down) ends its callers\' wait at once with the refusal', async () => {
    const a = fakeApprover()
    const w = createApprovalWaiters({ approver: a.caller, clock: Date.now, pollMs: 10 })
    await w.ready()
    const refused = new RpcError(APPROVAL_REFUSED, 'the signer could not issue an approval token', { reason: 'signer_unavailable' })
    const resend = async (): Promise<ApprovalTicket> => {
      throw refused
    }
    const started = Date.now()
    const waiting = [w.wait(ticket('old'), resend), w.wait(ticket('old'), resend)]
    a.restart()
    for (const p of waiting) await expect(p).rejects.toBe(refused)
    expect(Date.now() - started).toBeLessThan(5_000)
    expect(w.waiting).toBe(0)
    w.close()
  })

  it('no end by the expiry plus grace (approver gone): null', async () => {
    const a = fakeApprover()
    const w = createApprovalWaiters({ approver: a.caller, clock: Date.now, pollMs: 10, graceMs: 20 })
    await w.ready()
    expect(await w.wait(ticket('r1', 30), never)).toBeNull()
    w.close()
  })
})
