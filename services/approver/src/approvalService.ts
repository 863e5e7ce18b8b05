import {
  APPROVAL_TOKEN_TTL_MS,
  AuditWriteError,
  intentHash,
  type ApprovalOutcome,
  type ApprovalTicket,
  type ApprovalUpdates,
  type AuditAppend,
  type AuditLog,
  type Clock,
  type GrantParams,
  type GrantResult,
  type Hex,
  type RequestApprovalParams,
  type RouterTable,
  type TxIntent,
} from '@countersign/shared'
import type { ApprovalChannel, DecideResult, DecisionSource, RequestEnd } from './channels/channel.js'
import { DecisionFeed } from './requests/decisionFeed.js'
import { KeptDecisions } from './requests/keptDecisions.js'
import type { PendingRequest, PendingRequests } from './requests/pendingRequests.js'
import { newQuorum, quorumMet, quorumView, recordApproval, withdrawApproval } from './quorum/quorumVotes.js'
import { summarise } from './summary.js'

export interface Granter {
  /** Mints a token; it may still be on its way to disk (see `durable`). */
  grant(binding: GrantParams): Promise<GrantResult>
  /** Resolves once every token granted before the call is on disk: no token is handed on before. */
  durable(): Promise<void>
}

export class DecisionError extends Error {
  constructor(
    readonly code: 'not_found' | 'signer_unavailable' | 'operator_required',
    message: string,
  ) {
    super(message)
  }
}

/** Audit rows committed whose fsync failed: written as far as every reader of the log can tell. */
const committedAnyway = (err: unknown): boolean => err instanceof AuditWriteError && err.committed

/** requestApproval refused: 409 intent_conflict, 429 too_many_pending, 503 quorum_unavailable (approver_unavailable) or signer_unavailable at the gateway. */
export class ApprovalRefusal extends Error {
  constructor(
    readonly reason: 'intent_conflict' | 'too_many_pending' | 'quorum_unavailable' | 'signer_unavailable',
    message: string,
  ) {
    super(message)
  }
}

export interface ApprovalService {
  /**
   * Answers at once: the pending request (new, or the one this intent already
   * has), or the decision when there is one (kept, or made by a channel that
   * decides by itself). Never waits for a human.
   */
  requestApproval(params: RequestApprovalParams): Promise<ApprovalTicket>
  /** Requests that ended since `cursor` (the gateway's short poll). */
  updates(cursor: string | null): ApprovalUpdates
  decide(requestId: string, approved: boolean, via: DecisionSource, operator?: string): Promise<DecideResult>
  /**
   * Takes the request a stopped skill run's call created off every channel
   * (requestApproval `owner`); false when it has none pending. A request the
   * call only attached to, anyone else's, is never touched.
   */
  withdrawOwn(owner: string): boolean
  /** Ends expired requests (audit approval_expired) and forgets old decisions. Never rejects: an event it cannot record waits for the next sweep (onBackgroundError says so). */
  sweep(): Promise<void>
  addChannel(channel: ApprovalChannel): void
  pending: PendingRequests
}

/** How many unawaited audit events (expiries, withdrawals) a long audit.db outage may leave waiting in memory. */
export const MAX_UNRECORDED_EVENTS = 10_000

/**
 * What the signer mints a token for: the transaction, the exact intent shown
 * to the operator, and the lost transaction the card said it replaces, if
 * any (the signer then accepts the token for that replacement only).
 */
function grantBinding(entry: PendingRequest): GrantParams {
  return {
    txRequestHash: entry.summary.txRequestHash as Hex,
    intentHash: entry.intentHash as Hex,
    intentId: entry.intent.id,
    ...(entry.replacing ? { replacing: entry.replacing as Hex } : {}),
  }
}

/**
 * Whether a request asking to replace `replacing` is for another purpose than
 * the pending request `existing`: a first signature, or another lost transaction.
 */
function replacesOtherwise(existing: { replacing: string | null }, replacing: string | undefined): boolean {
  return replacing !== undefined && existing.replacing?.toLowerCase() !== replacing.toLowerCase()
}

/**
 * Whether a request to sign an intent again (its transaction was lost,
 * `replacing`) passes over the decision kept for the intent: an approval
 * given before it, whose token went into the lost transaction and which the
 * signer now refuses. An approval given for this same replacement, and any
 * refusal, still answer it.
 */
function supersededByReplacement(decided: { outcome: ApprovalOutcome; replacing: string | null }, replacing: string | undefined): boolean {
  return decided.outcome.approved && replacesOtherwise(decided, replacing)
}

export function createApprovalService(deps: {
  pending: PendingRequests
  granter: Granter
  audit: AuditLog
  routers: RouterTable
  clock: Clock
  /** Written into approval_requested (web, cli, auto). */
  mode: string
  /**
   * How many distinct named operators the intent needs (policy
   * requireQuorumAbove, read by the approver itself); null or absent: one
   * approval decides.
   */
  quorumFor?: (intent: TxIntent) => number | null
  /** Named operators configured (SERVICE_OPERATORS_FILE); 0 for the single token or no operator auth. */
  namedOperators?: number
  /** An audit write that failed with no caller to tell: an fsync after its caller was answered (auto mode's rows; see approveAtOnce), an expiry the sweep could not record. */
  onBackgroundError?: (err: Error) => void
}): ApprovalService {
  const { pending, granter, audit, clock } = deps
  const channels: ApprovalChannel[] = []
  const feed = new DecisionFeed()
  const kept = new KeptDecisions(clock)
  // Requests taken off the list while their decision is carried out: attaching to them must still work.
  const deciding = new Map<string, PendingRequest>()
  // Events no caller waits for (expiries, withdrawals) whose append failed, oldest first: the next sweep tries them again.
  const unrecorded: AuditAppend[] = []

  /**
   * Appends events no caller waits for, together (one commit). One that fails
   * (audit.db locked or full) is kept for the next sweep and reported through
   * onBackgroundError. Never rejects: only timers and fire-and-forget calls
   * run it, and an unhandled rejection would end the process.
   */
  async function recordUnawaited(events: AuditAppend[]): Promise<void> {
    const results = await Promise.allSettled(events.map((event) => audit.append(event)))
    let failure: Error | null = null
    results.forEach((r, i) => {
      if (r.status === 'fulfilled') return
      failure = r.reason as Error
      unrecorded.push(events[i]!)
    })
    const dropped = unrecorded.length - MAX_UNRECORDED_EVENTS
    if (dropped > 0) unrecorded.splice(0, dropped)
    if (failure) {
      const names = [...new Set(unrecorded.map((e) => e.event))].join(', ')
      const lost = dropped > 0 ? `; the ${dropped} oldest were dropped (at most ${MAX_UNRECORDED_EVENTS} are kept)` : ''
      deps.onBackgroundError?.(new Error(`${unrecorded.length} audit events (${names}) are not in the audit log yet, retried at the next sweep (${(failure as Error).message})${lost}`))
    }
  }

  const ticketOf = (p: PendingRequest): ApprovalTicket => ({ state: 'pending', requestId: p.requestId, txRequestHash: p.summary.txRequestHash, expiresAt: p.expiresAt })

  /** The one place a request ends: the gateway hears of it, every channel stops showing it, a decision is kept. */
  function end(p: PendingRequest, outcome: ApprovalOutcome, how: RequestEnd, keepUntil?: number): void {
    feed.push(outcome)
    if (keepUntil !== undefined) kept.keep(p.intent.id, p.intentHash, outcome, keepUntil, p.replacing)
    for (const c of channels) {
      try {
        c.withdraw(p.requestId, how)
      } catch {
        // One channel failing to update must not keep the others from it.
      }
    }
  }

  /**
   * Runs the audit appends of a decision, then `carriedOut`. If they fail,
   * the request goes back on the list (a quorum keeps its audited votes: any
   * of its operators approving again carries the decision out) and the error
   * reaches the caller. Rows committed whose fsync failed are in the log for
   * anyone to read: the decision they record is carried out, and the error
   * still reaches the caller (found by review: an approval whose token id the
   * public history showed went back on the list, and the operator could deny
   * it while the token stayed valid in the signer).
   */
  async function auditedOrRestored(entry: PendingRequest, append: () => Promise<void>, carriedOut: () => void): Promise<void> {
    try {
      await append()
    } catch (err) {
      if (committedAnyway(err)) carriedOut()
      else pending.restore(entry)
      throw err
    }
    carriedOut()
  }

  /** Grants (or records the denial of) a request already taken off the list; puts it back if the signer cannot mint. */
  async function carryOut(entry: PendingRequest, approved: boolean, via: DecisionSource, operator: string | undefined): Promise<void> {
    const { intent, summary, requestId } = entry
    // The operator's name, never their token (named operators only: single-token audit rows stay as they were).
    const by = operator === undefined ? {} : { operator }
    // A quorum's approval names every operator who approved, in vote order.
    const approvers = approved && entry.quorum ? { approvedBy: [...entry.quorum.approvedBy] } : {}
    const base = { requestId, txRequestHash: summary.txRequestHash }
    if (approved) {
      let grant: GrantResult
      try {
        // Bound to the transaction and to the exact intent shown to the operator.
        grant = await granter.grant(grantBinding(entry))
        await granter.durable()
      } catch (err) {
        pending.restore(entry)
        throw new DecisionError('signer_unavailable', `the signer could not issue a token (${(err as Error).message}); the request is still pending`)
      }
      // A decision the audit log does not hold is not announced: the request goes back on the list (its
      // token, never handed out, expires unused) and the operator sees the error and may decide again.
      // Both rows in one transaction: committed apart, a failure between them left the token's id
      // on record (history is public) for a request back on the list, which the operator could then
      // deny while the token stayed valid in the signer (found by review).
      const granted: AuditAppend = {
        intentId: intent.id,
        event: 'approval_granted',
        data: { requestId, action: summary.action, tokenId: grant.approvalTokenId, riskScore: summary.riskScore, via, ...by, ...approvers },
      }
      const decided: AuditAppend = { intentId: intent.id, event: 'web_approval_decided', data: { requestId, approved: true, action: summary.action, via, ...by } }
      await auditedOrRestored(
        entry,
        async () => {
          await audit.appendAll(via === 'auto' ? [granted] : [granted, decided])
        },
        () => end(entry, { approved: true, ...base, approvalTokenId: grant.approvalTokenId }, 'approved', grant.expiresAt),
      )
    } else {
      await auditedOrRestored(
        entry,
        async () => {
          await audit.appendAll([
            { intentId: intent.id, event: 'approval_rejected', data: { requestId, action: summary.action, reason: 'user_declined', via, ...by } },
            { intentId: intent.id, event: 'web_approval_decided', data: { requestId, approved: false, action: summary.action, via, ...by } },
          ])
        },
        () => end(entry, { approved: false, ...base, reason: 'user_declined' }, 'denied', clock() + APPROVAL_TOKEN_TTL_MS),
      )
    }
  }

  /**
   * One named operator's vote on a quorum request: an approval counts once
   * per operator and decides only when it completes the quorum; any denial
   * decides at once. Each vote is audited (approval_vote, the operator's name,
   * never a token).
   */
  async function voteOn(entry: PendingRequest, approved: boolean, via: DecisionSource, operator: string | undefined): Promise<DecideResult> {
    const q = entry.quorum!
    const { intent, summary, requestId } = entry
    if (approved && operator === undefined) {
      throw new DecisionError(
        'operator_required',
        `request ${requestId} needs ${q.required} distinct named operators (policy requireQuorumAbove): approve on the dashboard or with countersign-approve, each with their own token`,
      )
    }
    // Synchronous from the vote to take(): two last approvals at once cannot both carry it out, nor both miss the quorum.
    const counted = approved ? recordApproval(q, operator!) : true
    const decides = !approved || quorumMet(q)
    let decided = decides
    if (decides) {
      pending.take(requestId)
      deciding.set(intent.id, entry)
    }
    const view = quorumView(q)
    const by = operator === undefined ? {} : { operator }
    let unconfirmed: unknown
    try {
      try {
        await audit.append({
          intentId: intent.id,
          event: 'approval_vote',
          data: { requestId, action: summary.action, ...by, approved, counted, approvals: view.approvals, required: view.required, via },
        })
      } catch (err) {
        // A vote the audit log does not hold did not happen: it stops counting and the request stays pending.
        // One committed whose fsync failed is in the log: it counts, as its row says, and the error reaches the caller.
        if (!committedAnyway(err)) {
          if (approved && counted) withdrawApproval(q, operator!)
          if (decides) pending.restore(entry)
          throw err
        }
        unconfirmed = err
      }
      // Another operator's vote can have been taken back while this one's row was written (its own
      // row failed): the quorum this vote completed may no longer hold. Then the request goes back on
      // the list and this vote stays counted, as one that did not decide (found by review).
      if (decides && approved && !quorumMet(q)) {
        pending.restore(entry)
        decided = false
      } else if (decides) await carryOut(entry, approved, via, operator)
    } finally {
      if (decides) deciding.delete(intent.id)
    }
    // A request withdrawn or expired while this vote's row was written has already left every
    // channel: showing it again would put a card on screens that no decision can reach (found by review).
    if (!decided && counted && pending.get(requestId) === entry) {
      for (const c of channels) {
        try {
          c.update?.(entry)
        } catch {
          // As in end(): one channel failing must not keep the others from the new state.
        }
      }
    }
    if (unconfirmed !== undefined) throw unconfirmed
    return { decided, requestId, approved, ...by, quorum: decided ? view : quorumView(q), counted }
  }

  const withdrawn = (p: PendingRequest): ApprovalOutcome => ({ approved: false, requestId: p.requestId, txRequestHash: p.summary.txRequestHash, reason: 'withdrawn' })

  /**
   * Commits approval_requested for a request on the list. A request the audit
   * log does not hold did not happen: if the commit fails it leaves the list
   * (nobody can decide it), whoever attached to it meanwhile hears it
   * withdrawn, and the caller gets the error.
   */
  async function recordRequest(entry: PendingRequest, requested: AuditAppend): Promise<void> {
    try {
      await audit.append(requested)
    } catch (err) {
      if (pending.take(entry.requestId)) end(entry, withdrawn(entry), 'withdrawn')
      throw err
    }
  }

  /**
   * A channel that approves everything (auto): the token is minted first and
   * the request and its approval are then committed together, in that order,
   * in one audit transaction, while the signer's fsync of the token runs.
   * The gateway is answered once the token is durable and the rows are
   * committed, before their own fsync: the gateway's next commit (tx_built),
   * later in the same -wal file, makes them durable before the gateway
   * answers anyone, and this process's fsync follows anyway (a failure is
   * reported through onBackgroundError). If the approver dies between the
   * mint and the commit, the token was never handed to anyone and expires
   * unused, as one whose approval_granted commit fails does.
   */
  async function approveAtOnce(entry: PendingRequest, requested: AuditAppend, via: DecisionSource): Promise<ApprovalTicket> {
    const { intent, summary, requestId } = entry
    // Off the list at once (nobody decides it), yet still the intent's one request until its end.
    pending.take(requestId)
    deciding.set(intent.id, entry)
    // Nobody decides a request in auto mode: put back on the list it would
    // only expire, its caller waiting 300 s for an answer. It is refused at
    // once instead (503 at the API). Whoever attached meanwhile hears it
    // withdrawn, and asking again once the signer is back starts afresh.
    const signerUnavailable = (err: unknown) => {
      end(entry, withdrawn(entry), 'withdrawn')
      return new ApprovalRefusal('signer_unavailable', `the signer could not issue an approval token (${(err as Error).message}); nothing was approved, retry later`)
    }
    try {
      let grant: GrantResult
      try {
        grant = await granter.grant(grantBinding(entry))
      } catch (err) {
        // Nothing was written: the request did not happen.
        throw signerUnavailable(err)
      }
      const tokenDurable = granter.durable()
      tokenDurable.catch(() => undefined) // awaited below; this keeps a failure before then from being "unhandled"
      // Appended in this order in the same tick: one transaction.
      const rows = [
        audit.appendOrdered(requested),
        audit.appendOrdered({
          intentId: intent.id,
          event: 'approval_granted',
          data: { requestId, action: summary.action, tokenId: grant.approvalTokenId, riskScore: summary.riskScore, via },
        }),
      ]
      const rowsDurable = Promise.all(rows.map((r) => r.durable))
      rowsDurable.catch(() => undefined) // reported below once the commit itself went through
      try {
        await Promise.all(rows.map((r) => r.ordered))
      } catch (err) {
        // Neither row is in the log, so the request did not happen: whoever attached to it meanwhile hears
        // it withdrawn, the caller gets the error, and the token, never handed out, expires unused.
        end(entry, withdrawn(entry), 'withdrawn')
        throw err
      }
      rowsDurable.catch((err: Error) => deps.onBackgroundError?.(err))
      try {
        await tokenDurable
      } catch (err) {
        // The token may not survive a power cut: it is not handed on, and the
        // log, which already says it was granted, says the request ended unused.
        audit
          .append({ intentId: intent.id, event: 'approval_withdrawn', data: { requestId, reason: 'token_not_durable' } })
          .catch((e: Error) => deps.onBackgroundError?.(e))
        throw signerUnavailable(err)
      }
      const outcome: ApprovalOutcome = { approved: true, requestId, txRequestHash: summary.txRequestHash, approvalTokenId: grant.approvalTokenId }
      end(entry, outcome, 'approved', grant.expiresAt)
      return { state: 'decided', outcome }
    } finally {
      deciding.delete(intent.id)
    }
  }

  const service: ApprovalService = {
    pending,

    addChannel(channel) {
      channels.push(channel)
    },

    async requestApproval(params) {
      const { intent } = params
      const hash = intentHash(intent)
      const conflict = () =>
        new ApprovalRefusal('intent_conflict', `intent ${intent.id} already has an approval request for a different body; send the same intent, or a new intent with a new id`)

      const decided = kept.get(intent.id)
      if (decided) {
        if (decided.intentHash !== hash) throw conflict()
        if (!supersededByReplacement(decided, params.replacing)) return { state: 'decided', outcome: decided.outcome }
      }
      const existing = pending.byIntent(intent.id) ?? deciding.get(intent.id)
      if (existing) {
        if (existing.intentHash !== hash) throw conflict()
        if (!replacesOtherwise(existing, params.replacing)) return ticketOf(existing)
        // A request to sign the intent again after its transaction was lost
        // does not attach to a request for another purpose: the token that
        // request's card leads to could not pay for this signature (the
        // signer takes a token for a replacement only when it names the
        // transaction replaced), so the operator would approve for nothing.
        // A request still waiting gives way to it; one being decided cannot.
        if (deciding.get(intent.id) === existing) {
          throw new ApprovalRefusal(
            'intent_conflict',
            `intent ${intent.id} has an approval request ${existing.replacing ? `to replace ${existing.replacing}` : 'for its first signature'} that is being decided right now; ask again to replace ${params.replacing} once it is decided`,
          )
        }
      }
      // The request this one supersedes is withdrawn only once nothing below can refuse this one (found by review).
      const superseded = existing
      if (!superseded) {
        const full = pending.capacityProblem(intent.wallet.address)
        if (full) throw new ApprovalRefusal('too_many_pending', full)
      }

      // Synchronous from the checks above to add(): a concurrent request of the same intent attaches to this one.
      // The quorum is the larger of the approver's own reading of the policy and the gateway's: a policy missing on one side never lowers it.
      const needed = Math.max(deps.quorumFor?.(intent) ?? 1, params.quorum ?? 1)
      if (needed > 1 && needed > (deps.namedOperators ?? 0)) {
        throw new ApprovalRefusal(
          'quorum_unavailable',
          `this request needs ${needed} distinct named operators (policy requireQuorumAbove) and the approver has ${deps.namedOperators ? `only ${deps.namedOperators} in SERVICE_OPERATORS_FILE` : 'no named operators (SERVICE_OPERATORS_FILE)'}; nothing was approved. Give the approver the same SERVICE_POLICY_FILE and enough named operators`,
        )
      }
      const summary = summarise(params, deps.routers)
      if (superseded) {
        // Its place on the list (and under the caps) goes to this one.
        pending.take(superseded.requestId)
        void recordUnawaited([{ intentId: intent.id, event: 'approval_withdrawn', data: { requestId: superseded.requestId, reason: 'superseded' } }])
        end(superseded, withdrawn(superseded), 'withdrawn')
      }
      const entry = pending.add(intent, hash, summary, needed > 1 ? newQuorum(needed) : null, { owner: params.owner ?? null, replacing: params.replacing ?? null })
      const requested: AuditAppend = {
        intentId: intent.id,
        event: 'approval_requested',
        data: {
          requestId: entry.requestId,
          action: summary.action,
          riskScore: summary.riskScore,
          mode: deps.mode,
          ...(entry.quorum ? { quorum: entry.quorum.required } : {}),
          ...(entry.replacing ? { replacing: entry.replacing } : {}),
        },
      }
      const approver = entry.quorum ? undefined : channels.find((c) => c.approvesAtOnce)?.approvesAtOnce
      if (approver) return approveAtOnce(entry, requested, approver)
      /** What the caller hears once the request is off the list (decided, being decided, withdrawn); null while it waits there. */
      const offTheList = (): ApprovalTicket | null => {
        const now = kept.get(intent.id)
        if (now && now.intentHash === hash && now.outcome.requestId === entry.requestId) return { state: 'decided', outcome: now.outcome }
        // An operator's decision still being carried out (its token minted) took it off the pending list:
        // the caller waits for that outcome like any other, it was not withdrawn.
        if (deciding.get(intent.id) === entry) return ticketOf(entry)
        return pending.get(entry.requestId) ? null : { state: 'decided', outcome: withdrawn(entry) }
      }
      await recordRequest(entry, requested)
      // Ended while it was being recorded (superseded, withdrawn, decided): shown to nobody (found by review:
      // a superseded request's card came up after its end, and deciding it answered not_found).
      const ended = offTheList()
      if (ended) return ended
      await Promise.all(channels.map((c) => Promise.resolve().then(() => c.present(entry)).catch(() => undefined)))
      // A channel may have decided while it was shown the request (present may resolve after deciding).
      return offTheList() ?? ticketOf(entry)
    },

    updates(cursor) {
      return feed.since(cursor)
    },

    async decide(requestId, approved, via, operator) {
      const live = pending.get(requestId)
      if (live?.quorum) return voteOn(live, approved, via, operator)
      const entry = pending.take(requestId)
      if (!entry) throw new DecisionError('not_found', `approval request ${requestId} does not exist, has expired or was already decided`)
      // Until the decision is carried out (the token minted), this is still the intent's one request.
      deciding.set(entry.intent.id, entry)
      try {
        await carryOut(entry, approved, via, operator)
      } finally {
        deciding.delete(entry.intent.id)
      }
      return { decided: true, requestId, approved, ...(operator === undefined ? {} : { operator }) }
    },

    withdrawOwn(owner) {
      const e = pending.byOwner(owner)
      if (!e || !pending.take(e.requestId)) return false
      void recordUnawaited([{ intentId: e.intent.id, event: 'approval_withdrawn', data: { requestId: e.requestId, reason: 'run_stopped' } }])
      end(e, withdrawn(e), 'withdrawn')
      return true
    },

    async sweep() {
      kept.sweep()
      const expiries: AuditAppend[] = []
      for (const e of pending.sweep()) {
        end(e, { approved: false, requestId: e.requestId, txRequestHash: e.summary.txRequestHash, reason: 'approval_expired' }, 'expired')
        expiries.push({ intentId: e.intent.id, event: 'approval_expired', data: { requestId: e.requestId, action: e.summary.action } })
      }
      await recordUnawaited([...unrecorded.splice(0), ...expiries])
    },
  }
  return service
}
