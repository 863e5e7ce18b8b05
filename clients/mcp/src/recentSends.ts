// The intents this server made for recent sending calls, by what they ask.
//
// A host that stops waiting for a tool call (MCP's default request timeout is
// 60 s, and a host cancels on it) never delivers the call's result, even when
// the transaction went out: the model sees only "Request timed out" and calls
// the tool again. Built afresh, that call would be a new intent with a new id,
// and the gateway would pay a second time (found by review). So an identical
// call made while the first call's intent is still valid (before its deadline)
// is sent as that same intent: the gateway answers a repeat of an intent with
// the transaction it already sent, waits behind the first call if that is
// still running, and attaches to its approval request if an operator has not
// decided yet. A second, separate transaction of the same kind takes an
// explicit newTransaction: true.
import type { ApprovalResult, TxIntent } from '@countersign/client'

/** What makes two calls "the same request": chain, wallet and action, without display hints, notes or the case of addresses. */
export function requestKey(intent: TxIntent): string {
  return JSON.stringify([intent.chain.chainId, intent.wallet.address.toLowerCase(), withoutHints(intent.action)])
}

/**
 * The action with its keys sorted, strings lowercased (addresses are the only
 * letters in an action) and each asset reduced to its kind and address: a
 * symbol or decimals the model declares differently on a retry change nothing
 * the gateway signs.
 */
function withoutHints(value: unknown): unknown {
  if (typeof value === 'string') return value.toLowerCase()
  if (Array.isArray(value)) return value.map(withoutHints)
  if (value === null || typeof value !== 'object') return value
  const entries = Object.entries(value as Record<string, unknown>).filter(([k]) => !('kind' in value && (k === 'symbol' || k === 'decimals')))
  return Object.fromEntries(entries.sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => [k, withoutHints(v)]))
}

/** An earlier call's intent that a new call is sent as, how long ago that call came, and the approval it got, if it got that far. */
export interface Repeat {
  intent: TxIntent
  ageMs: number
  approval: ApprovalResult | undefined
}

interface Entry {
  intent: TxIntent
  at: number
  approval?: ApprovalResult
}

/** More entries than any host makes in an intent's lifetime; only a bound on memory. */
const MAX_ENTRIES = 1_000

export class RecentSends {
  private readonly byKey = new Map<string, Entry>()

  constructor(private readonly now: () => number = Date.now) {}

  /** The intent of an earlier identical call whose deadline has not passed (after it the gateway would refuse to sign it). */
  repeatOf(intent: TxIntent): Repeat | undefined {
    this.dropExpired()
    const entry = this.byKey.get(requestKey(intent))
    return entry ? { intent: entry.intent, ageMs: this.now() - entry.at, approval: entry.approval } : undefined
  }

  /** Remembered before anything is sent: a call cancelled while its request is out must leave its intent here. */
  remember(intent: TxIntent): void {
    this.dropExpired()
    const key = requestKey(intent)
    this.byKey.delete(key)
    this.byKey.set(key, { intent, at: this.now() })
    // Oldest first (Map keeps insertion order).
    while (this.byKey.size > MAX_ENTRIES) this.byKey.delete(this.byKey.keys().next().value!)
  }

  /** The intent's approval, once in hand: a repeat after it was signed goes to sign-and-send without asking an operator again. */
  approved(intent: TxIntent, approval: ApprovalResult): void {
    const entry = this.byKey.get(requestKey(intent))
    if (entry?.intent.id === intent.id) entry.approval = approval
  }

  /** After a clear answer that nothing was signed for it (a refusal, a decline): an identical call is a new request. */
  forget(intent: TxIntent): void {
    const key = requestKey(intent)
    if (this.byKey.get(key)?.intent.id === intent.id) this.byKey.delete(key)
  }

  private dropExpired(): void {
    const nowSeconds = this.now() / 1000
    for (const [key, entry] of this.byKey) if (entry.intent.constraints.deadline <= nowSeconds) this.byKey.delete(key)
  }
}
