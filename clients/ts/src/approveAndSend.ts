// Waiting for a human without holding one long request open. An operator may
// take minutes; proxies, agent hosts and HTTP stacks give up on a silent
// request long before that (30 s is common). So the client sends
// approve-request in short attempts: when one runs out, it sends the same
// intent again, which attaches to the request already pending (the service
// keeps one request per intent and does not withdraw it when a caller goes
// away, DESIGN §6 "pending requests"). Meanwhile it reports the pending
// request so the caller can tell its user who has to act.
import type { ApprovalResult, PendingApproval, Receipt, SignAndSendResult, TxIntent } from '@countersign/shared'
import { APPROVAL_REQUEST_TTL_MS } from '@countersign/shared/constants'
import { checkMs, type CountersignClient } from './client.js'
import { signAndSendSettled, type SignAndSendRetryOptions } from './signAndSendSettled.js'
import { sleep } from './sleep.js'
import { ApproverUnavailableError, BroadcastFailedError, CountersignError, NotFoundError, ReceiptTimeoutError, RequestTimeoutError, SentButUnconfirmedError, ServiceUnreachableError, UnexpectedResponseError } from './errors.js'

/** Short enough for any proxy or host timeout, long enough not to flood the service. */
export const DEFAULT_ATTEMPT_MS = 20_000
/** How often the caller hears that the request is still waiting. */
export const DEFAULT_PENDING_POLL_MS = 5_000
/** The approval request lifetime plus time for the service's own expiry answer. */
export const DEFAULT_APPROVAL_WAIT_MS = APPROVAL_REQUEST_TTL_MS + 30_000
export const DEFAULT_RECEIPT_TIMEOUT_MS = 120_000
/** Outages of the gateway or the approver tolerated in a row before giving up. */
const MAX_TRANSIENT_FAILURES = 3

export interface PendingInfo {
  /** The approval request on the operator's dashboard; undefined when the pending list did not show it (yet). */
  requestId: string | undefined
  /** Seconds left before the request expires. */
  ttlSeconds: number | undefined
  /** What the operator sees (the service's description of the intent, risk, warnings). */
  summary: PendingApproval['summary'] | undefined
  /** Milliseconds since the wait began. */
  waitedMs: number
  /** Which approve-request attempt is running (1 = the first). */
  attempt: number
}

export interface WaitForApprovalOptions {
  /** Called while the intent waits for an operator: first as soon as it shows as pending, then every pendingPollMs. */
  onPending?: (info: PendingInfo) => void | Promise<void>
  /** Length of one approve-request attempt; default 20 s. */
  attemptMs?: number
  /** Interval of onPending calls; default 5 s. */
  pendingPollMs?: number
  /** Give up after this long in all; default the approval lifetime (300 s) + 30 s. */
  maxWaitMs?: number
  signal?: AbortSignal
}

export interface ApproveAndSendOptions extends WaitForApprovalOptions, SignAndSendRetryOptions {
  /** How long to wait for the receipt after broadcast; default 120 s. */
  receiptTimeoutMs?: number
  receiptPollMs?: number
  /**
   * The approval this intent already got in an earlier call (whose answer the
   * caller never saw): no approve-request is sent and signing goes ahead with
   * it. sign-and-send of an intent signed before answers that same
   * transaction and needs no token; for an intent not signed yet, a token
   * that has expired meanwhile is refused there, nothing signed.
   */
  approval?: ApprovalResult
  /** Called once the approval is in hand, before anything is signed: what a later call for the same intent can pass as `approval`. */
  onApproved?: (approval: ApprovalResult) => void
}

export interface SendOutcome {
  approval: ApprovalResult
  sent: SignAndSendResult
  receipt: Receipt
}

/** Thrown when maxWaitMs passed without the service answering the approval (it normally answers approval_expired first). */
export class ApprovalWaitTimeoutError extends CountersignError {
  override name = 'ApprovalWaitTimeoutError'
  constructor(readonly intentId: string, readonly waitedMs: number) {
    super(0, { error: 'approval_wait_timeout', message: `no approval decision for intent ${intentId} after ${Math.round(waitedMs / 1000)} s` })
  }
}

/** Resolves when `signal` aborts (never rejects). */
const aborted = (signal: AbortSignal) =>
  new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })))

/**
 * Resolves with the approve-request result once policy allows the intent or
 * an operator approved it, or at once for an intent signed before whose
 * transaction sign-and-send returns (no token; its policyDecision may then
 * say `require_approval`, or `deny` for a mined one); rejects with PolicyDeniedError,
 * ApprovalDeclinedError, ApprovalExpiredError... as the service answered.
 */
export async function waitForApproval(client: CountersignClient, intent: TxIntent, o: WaitForApprovalOptions = {}): Promise<ApprovalResult> {
  const attemptMs = checkMs('attemptMs', o.attemptMs ?? DEFAULT_ATTEMPT_MS)
  const pollMs = checkMs('pendingPollMs', o.pendingPollMs ?? DEFAULT_PENDING_POLL_MS)
  const maxWaitMs = checkMs('maxWaitMs', o.maxWaitMs ?? DEFAULT_APPROVAL_WAIT_MS)
  const started = Date.now()
  let attempt = 1
  let done = false
  const stopWatching = new AbortController()

  // Reports the pending request while the attempts run. The first look comes
  // after a second: an intent that needs no operator is answered before that.
  const watch = async () => {
    let delay = Math.min(1_000, pollMs)
    while (!done) {
      try {
        await sleep(delay, stopWatching.signal)
      } catch {
        return
      }
      delay = pollMs
      if (done || !o.onPending) continue
      const entry = await client.pendingFor(intent.id, { timeoutMs: Math.min(pollMs, 10_000), signal: stopWatching.signal }).catch(() => undefined)
      if (done) return
      // Nothing listed and still in the first attempt: the answer may simply be on its way.
      if (!entry && attempt === 1) continue
      // The caller's callback: one that throws (at once or later) is ignored, and one that never settles
      // does not keep the wait from ending when the answer comes.
      const info = { requestId: entry?.requestId, ttlSeconds: entry?.ttlSeconds, summary: entry?.summary, waitedMs: Date.now() - started, attempt }
      const onPending = o.onPending
      const reported = Promise.resolve()
        .then(() => onPending(info))
        .catch(() => undefined)
      await Promise.race([reported, aborted(stopWatching.signal)])
    }
  }
  const watcher = watch()

  try {
    let transientFailures = 0
    for (;;) {
      const remaining = maxWaitMs - (Date.now() - started)
      if (remaining <= 0) throw new ApprovalWaitTimeoutError(intent.id, Date.now() - started)
      try {
        return await client.approveRequest(intent, { timeoutMs: Math.min(attemptMs, remaining), ...(o.signal ? { signal: o.signal } : {}) })
      } catch (err) {
        if (err instanceof RequestTimeoutError) {
          // The request stays pending on the service; the next attempt attaches to it.
          attempt++
          transientFailures = 0
          continue
        }
        if ((err instanceof ServiceUnreachableError || err instanceof ApproverUnavailableError) && ++transientFailures < MAX_TRANSIENT_FAILURES) {
          await sleep(1_000 * transientFailures, o.signal)
          attempt++
          continue
        }
        throw err
      }
    }
  } finally {
    done = true
    stopWatching.abort()
    await watcher
  }
}

/** Polls GET /v1/tx/:hash until the receipt exists. */
export async function waitForReceipt(
  client: CountersignClient,
  txHash: string,
  o: { chainId?: number; timeoutMs?: number; pollMs?: number; signal?: AbortSignal } = {},
): Promise<Receipt> {
  const timeoutMs = checkMs('timeoutMs', o.timeoutMs ?? DEFAULT_RECEIPT_TIMEOUT_MS)
  const pollMs = checkMs('pollMs', o.pollMs ?? 1_000)
  const started = Date.now()
  for (;;) {
    try {
      return await client.receipt(txHash, { ...(o.chainId !== undefined ? { chainId: o.chainId } : {}), ...(o.signal ? { signal: o.signal } : {}) })
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err
    }
    if (Date.now() - started >= timeoutMs) throw new ReceiptTimeoutError(txHash, Date.now() - started)
    await sleep(pollMs, o.signal)
  }
}

/**
 * The whole pipeline for one intent: approval (waiting for the operator
 * through short attaching retries when policy asks for one), signature and
 * broadcast (asked again with the same intent when no clear answer came; see
 * signAndSendSettled), then the receipt.
 */
export async function approveAndSend(client: CountersignClient, intent: TxIntent, o: ApproveAndSendOptions = {}): Promise<SendOutcome> {
  const approval = o.approval ?? (await waitForApproval(client, intent, o))
  // The service answers a decline with 403; a 200 that is not an approval is not the service's, and nothing is signed on it.
  if (!approval.approved) throw new UnexpectedResponseError('POST /v1/tx/approve-request', 200, 'a 200 answer with approved false', approval)
  o.onApproved?.(approval)
  // A sign-and-send without a clear answer is asked again with the same intent and token (never a new intent):
  // SendOutcomeUnknownError when it stays unclear.
  const sent = await signAndSendSettled(client, intent, approval.approvalTokenId, o)
  if (!sent.broadcast) throw new BroadcastFailedError(sent)
  let receipt: Receipt
  try {
    receipt = await waitForReceipt(client, sent.txHash, {
      chainId: intent.chain.chainId,
      ...(o.receiptTimeoutMs !== undefined ? { timeoutMs: o.receiptTimeoutMs } : {}),
      ...(o.receiptPollMs !== undefined ? { pollMs: o.receiptPollMs } : {}),
      ...(o.signal ? { signal: o.signal } : {}),
    })
  } catch (err) {
    // From here on the transaction exists: whatever failed, the caller must learn its hash, not only an error.
    throw new SentButUnconfirmedError(sent, intent.chain.chainId, err)
  }
  return { approval, sent, receipt }
}
