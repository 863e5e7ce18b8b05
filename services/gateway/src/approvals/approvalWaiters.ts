import {
  APPROVAL_REFUSED,
  approverMethods,
  RpcError,
  type ApprovalOutcome,
  type ApprovalTicket,
  type ApprovalUpdates,
  type Clock,
} from '@countersign/shared'

export interface ApproverCaller {
  call<T>(method: string, params: unknown, opts?: { timeoutMs?: number }): Promise<T>
}

export type PendingTicket = Extract<ApprovalTicket, { state: 'pending' }>

export interface ApprovalWaiters {
  /** Learns where the approver's decision feed stands; call before asking for a ticket. */
  ready(): Promise<void>
  /**
   * Waits for the end of a pending request. `resend` asks the approver again
   * for the same intent (after an approver restart); when the approver
   * refuses it then (APPROVAL_REFUSED: auto mode with the signer down, a
   * full queue), the wait rejects with that refusal. Resolves null when no
   * end arrived by the ticket's expiry plus a grace period (the approver is
   * gone), or when `signal` aborts (the client went away; the request stays
   * pending for the operator and its decision is kept for a retry).
   */
  wait(ticket: PendingTicket, resend: () => Promise<ApprovalTicket>, signal?: AbortSignal): Promise<ApprovalOutcome | null>
  /** Clients waiting now (tests, metrics). */
  readonly waiting: number
  close(): void
}

interface Waiter {
  resolve: (o: ApprovalOutcome | null) => void
  reject: (err: Error) => void
  resend: () => Promise<ApprovalTicket>
  timer: NodeJS.Timeout
}

/**
 * The gateway side of "no call waits for a human" (DESIGN §6): waiting
 * approve-request clients are held here, in the gateway, and one short poll
 * (`approvalUpdates`, every `pollMs` while anyone waits) brings the ends of
 * all their requests. 10,000 waiting clients cost one call per poll, and the
 * socket to the approver stays free for new requests and decisions.
 */
export function createApprovalWaiters(opts: { approver: ApproverCaller; clock: Clock; pollMs?: number; graceMs?: number; log?: (msg: string, err: unknown) => void }): ApprovalWaiters {
  const pollMs = opts.pollMs ?? 200
  const graceMs = opts.graceMs ?? 10_000
  const byRequest = new Map<string, Set<Waiter>>()
  // Ends that arrived for requests nobody waits for (yet): a poll answer can be handled just before the ticket's caller registers.
  const recent = new Map<string, ApprovalOutcome>()
  let cursor: string | null = null
  let polling = false
  let closed = false
  let count = 0

  const remember = (o: ApprovalOutcome) => {
    recent.set(o.requestId, o)
    if (recent.size > 10_000) recent.delete(recent.keys().next().value!)
  }

  const remove = (requestId: string, w: Waiter) => {
    const set = byRequest.get(requestId)
    if (!set?.delete(w)) return false
    clearTimeout(w.timer)
    count--
    if (set.size === 0) byRequest.delete(requestId)
    return true
  }

  const deliver = (o: ApprovalOutcome) => {
    remember(o)
    const set = byRequest.get(o.requestId)
    if (!set) return
    for (const w of [...set]) if (remove(o.requestId, w)) w.resolve(o)
  }

  /** The approver lost track of our cursor (restart): ask again for every request still waited for. */
  const resendAll = async () => {
    for (const [requestId, set] of [...byRequest]) {
      const first = set.values().next().value as Waiter | undefined
      if (!first) continue
      let ticket: ApprovalTicket
      try {
        ticket = await first.resend()
      } catch (err) {
        // Refused anew: its callers hear why now, not at the old request's expiry.
        if (err instanceof RpcError && err.code === APPROVAL_REFUSED) {
          for (const w of [...set]) if (remove(requestId, w)) w.reject(err)
        } else {
          opts.log?.('could not ask the approver again for a waiting request', err)
        }
        continue
      }
      if (ticket.state === 'decided') {
        for (const w of [...set]) if (remove(requestId, w)) w.resolve(ticket.outcome)
      } else if (ticket.requestId !== requestId) {
        byRequest.delete(requestId)
        const moved = byRequest.get(ticket.requestId) ?? new Set<Waiter>()
        for (const w of set) moved.add(w)
        byRequest.set(ticket.requestId, moved)
      }
    }
  }

  const fetchUpdates = (from: string | null) => opts.approver.call<ApprovalUpdates>(approverMethods.approvalUpdates, { cursor: from }, { timeoutMs: 5000 })

  async function pollLoop() {
    if (polling) return
    polling = true
    try {
      while (!closed && count > 0) {
        let updates: ApprovalUpdates
        try {
          updates = await fetchUpdates(cursor)
        } catch (err) {
          opts.log?.('approval updates: the approver did not answer', err)
          await sleep(1000)
          continue
        }
        cursor = updates.cursor
        if (updates.reset) await resendAll()
        for (const o of updates.outcomes) deliver(o)
        // A full page means more are waiting: fetch them at once.
        if (updates.outcomes.length < 1000) await sleep(pollMs)
      }
    } finally {
      polling = false
    }
  }

  return {
    async ready() {
      if (cursor === null) cursor = (await fetchUpdates(null)).cursor
    },

    wait(ticket, resend, signal) {
      const early = recent.get(ticket.requestId)
      if (early) return Promise.resolve(early)
      if (signal?.aborted) return Promise.resolve(null)
      return new Promise<ApprovalOutcome | null>((resolve, reject) => {
        let requestId = ticket.requestId
        const waiter: Waiter = {
          resolve: (o) => {
            signal?.removeEventListener('abort', onAbort)
            resolve(o)
          },
          reject: (err) => {
            signal?.removeEventListener('abort', onAbort)
            reject(err)
          },
          resend,
          timer: setTimeout(() => {
            // Find it wherever a restart moved it.
            for (const [id, set] of byRequest) if (set.has(waiter)) requestId = id
            if (remove(requestId, waiter)) waiter.resolve(null)
          }, Math.max(0, ticket.expiresAt - opts.clock()) + graceMs),
        }
        const onAbort = () => {
          for (const [id, set] of byRequest) if (set.has(waiter)) requestId = id
          if (remove(requestId, waiter)) waiter.resolve(null)
        }
        signal?.addEventListener('abort', onAbort, { once: true })
        const set = byRequest.get(requestId) ?? new Set<Waiter>()
        set.add(waiter)
        byRequest.set(requestId, set)
        count++
        void pollLoop()
      })
    },

    get waiting() {
      return count
    },

    close() {
      closed = true
      for (const [id, set] of [...byRequest]) for (const w of [...set]) if (remove(id, w)) w.resolve(null)
    },
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms).unref())
}
