// The approval channel interface, after go-ethereum Clef's UI API: the
// approval service presents a request to every channel, any channel may
// answer with the operator's decision, and the first decision wins; the
// others are told to withdraw the request. The dashboard (web), the
// approver's terminal (cli) and auto are channels; further ones (webhooks,
// several operators for a quorum) plug in here.
import type { PendingRequest } from '../requests/pendingRequests.js'

/** Who decided, as recorded in the audit log (`via`). */
export type DecisionSource = 'web' | 'terminal' | 'auto'

/** How a request ended, for the channels that still show it. */
export type RequestEnd = 'approved' | 'denied' | 'expired' | 'withdrawn'

export interface DecideResult {
  decided: true
  requestId: string
  approved: boolean
}

/** What a channel may do in return: decide a request it was shown. */
export interface ChannelHost {
  /** `operator`: the named operator who decided (SERVICE_OPERATORS_FILE); absent for the single token, the terminal and auto. */
  decide(requestId: string, approved: boolean, via: DecisionSource, operator?: string): Promise<DecideResult>
}

export interface ApprovalChannel {
  readonly name: string
  /**
   * Show a new request to the operator. Must not wait for the operator: a
   * channel that decides by itself (auto) may resolve after deciding.
   */
  present(request: PendingRequest): void | Promise<void>
  /** The request ended (on this or another channel, by expiry or withdrawal): stop showing it. */
  withdraw(requestId: string, end: RequestEnd): void
}
