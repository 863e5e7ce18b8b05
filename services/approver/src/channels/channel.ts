// The approval channel interface, after go-ethereum Clef's UI API: the
// approval service presents a request to every channel, any channel may
// answer with the operator's decision, and the first decision wins; the
// others are told to withdraw the request. The dashboard (web), the
// approver's terminal (cli), webhooks and auto are channels. A request above
// requireQuorumAbove is decided by the last approval its quorum needs (or
// the first denial); each vote before that is shown with `update`.
import type { QuorumView } from '../quorum/quorumVotes.js'
import type { PendingRequest } from '../requests/pendingRequests.js'

/** Who decided, as recorded in the audit log (`via`). */
export type DecisionSource = 'web' | 'terminal' | 'auto'

/** How a request ended, for the channels that still show it. */
export type RequestEnd = 'approved' | 'denied' | 'expired' | 'withdrawn'

/**
 * The answer to one decision. `decided` false: an approval counted towards a
 * quorum that is not met yet (the request stays pending). `operator`: who
 * decided (named operators only); `quorum`: the votes, on quorum requests.
 */
export interface DecideResult {
  decided: boolean
  requestId: string
  approved: boolean
  operator?: string
  quorum?: QuorumView
  /** Quorum requests: false when this operator had already approved (the vote counted once). */
  counted?: boolean
}

/** What a channel may do in return: decide a request it was shown. */
export interface ChannelHost {
  /** `operator`: the named operator who decided (SERVICE_OPERATORS_FILE); absent for the single token, the terminal and auto. */
  decide(requestId: string, approved: boolean, via: DecisionSource, operator?: string): Promise<DecideResult>
}

export interface ApprovalChannel {
  readonly name: string
  /**
   * A channel that approves every request the moment it exists (auto) says
   * so here instead of deciding in `present`: the service then approves the
   * request itself, mints its token, and commits approval_requested with
   * approval_granted in one audit transaction. No channel is shown the
   * request (it has ended before anyone could look at it).
   */
  readonly approvesAtOnce?: DecisionSource
  /**
   * Show a new request to the operator. Must not wait for the operator; it
   * may resolve after deciding, when the decision needs no one.
   */
  present(request: PendingRequest): void | Promise<void>
  /** The request ended (on this or another channel, by expiry or withdrawal): stop showing it. */
  withdraw(requestId: string, end: RequestEnd): void
  /** A named operator's approval counted towards the request's quorum, which is not met yet: show the new state. */
  update?(request: PendingRequest): void
}
