// The numbers `countersign-approve watch` shows. A number is given to a
// request the first time the feed shows it and stays with that request for
// the whole session; it is never given to another one. Before, "a N" meant
// "the N-th request at the moment the line is read": a request ending while
// the operator typed (an agent knows when its own request expires) renumbered
// the list, and "a 2" typed for the card shown as [2] approved the one that
// had been [3].
import type { ApprovalCard } from '../card/renderCard.js'
import type { QuorumView } from '../quorum/quorumVotes.js'

export interface Pending {
  requestId: string
  ttlSeconds: number
  card: ApprovalCard
  /** Above the policy's requireQuorumAbove: the named operators' approvals so far. */
  quorum?: QuorumView
}

export interface Numbered {
  n: number
  request: Pending
}

/** A request that was shown and is no longer pending: its number answers "ended", never another request. */
export interface EndedRequest {
  requestId: string
  title: string
  /** 'approved', 'denied', 'expired', 'withdrawn' from the feed; 'ended' when a fresh list no longer has it. */
  end: string
}

/** What the watch has shown this session. Never changed in place: each feed message makes the next one. */
export interface WatchState {
  /** Pending requests in the order they first appeared, each with its number. */
  shown: Numbered[]
  /** Every number given this session, by request id: a request that comes back keeps its number. */
  numbers: ReadonlyMap<string, number>
  ended: ReadonlyMap<number, EndedRequest>
  next: number
}

export const emptyWatch = (): WatchState => ({ shown: [], numbers: new Map(), ended: new Map(), next: 1 })

/** A new request is appended with the next unused number; one already shown (a quorum vote changed it) is replaced in place. */
export function withRequest(s: WatchState, request: Pending): WatchState {
  const known = s.numbers.get(request.requestId)
  if (known !== undefined && s.shown.some((e) => e.n === known)) {
    return { ...s, shown: s.shown.map((e) => (e.n === known ? { n: known, request } : e)) }
  }
  const n = known ?? s.next
  const ended = new Map(s.ended)
  ended.delete(n)
  return { shown: [...s.shown, { n, request }], numbers: new Map(s.numbers).set(request.requestId, n), ended, next: known === undefined ? s.next + 1 : s.next }
}

/** The request left the pending list: its number now answers that it ended. */
export function withEnded(s: WatchState, requestId: string, end = 'ended'): WatchState {
  const entry = s.shown.find((e) => e.request.requestId === requestId)
  if (!entry) return s
  return {
    ...s,
    shown: s.shown.filter((e) => e !== entry),
    ended: new Map(s.ended).set(entry.n, { requestId, title: entry.request.card.title, end }),
  }
}

/** The feed's whole list (sent after auth): what is no longer in it ended, what is new is appended. */
export function withList(s: WatchState, list: Pending[]): WatchState {
  const ids = new Set(list.map((p) => p.requestId))
  let next = s
  for (const e of s.shown) if (!ids.has(e.request.requestId)) next = withEnded(next, e.request.requestId)
  for (const p of list) next = withRequest(next, p)
  return next
}

export type Target = { kind: 'pending'; request: Pending } | { kind: 'ended'; ended: EndedRequest } | { kind: 'unknown' }

/** What "a N" / "d N" refers to: the request that was given N, whether it still waits, or nothing. */
export function target(s: WatchState, n: number): Target {
  const entry = s.shown.find((e) => e.n === n)
  if (entry) return { kind: 'pending', request: entry.request }
  const ended = s.ended.get(n)
  return ended ? { kind: 'ended', ended } : { kind: 'unknown' }
}
