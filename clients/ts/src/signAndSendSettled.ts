// sign-and-send until its answer is clear. A call that times out, or whose
// connection breaks after the request left, may have been carried out: the
// gateway goes on signing and broadcasting when the caller is gone, and a slow
// node can make it take longer than any client waits. Giving up there, or
// sending a new intent, can pay twice. The gateway answers a repeat of the same
// intent (with or without its token) with the transaction it already sent, so
// the same intent is asked again, a few times with backoff; when the answer is
// still unclear, SendOutcomeUnknownError says so, with the intent id.
import type { SignAndSendResult, TxIntent } from '@countersign/shared'
import { checkMs, type CountersignClient } from './client.js'
import { CountersignError, SendOutcomeUnknownError, ServiceUnreachableError, isServiceAnswer } from './errors.js'
import { sleep } from './sleep.js'

/** Repeats of an unclear sign-and-send after the first attempt. */
export const DEFAULT_SEND_RETRIES = 3
/** The first pause before a repeat; each next one is twice as long (1 s, 2 s, 4 s). */
export const DEFAULT_SEND_RETRY_DELAY_MS = 1_000

export interface SignAndSendRetryOptions {
  /** Timeout of one sign-and-send attempt; default the client's sendTimeoutMs (120 s). */
  sendTimeoutMs?: number
  /** Repeats of the same intent after an unclear answer; default 3. */
  sendRetries?: number
  /** Pause before the first repeat, doubled for each next; default 1 s. */
  sendRetryDelayMs?: number
  signal?: AbortSignal
}

/**
 * What one failed attempt says about the transaction:
 * - refused: the service answered no (a 4xx with its own code, or no RPC for the chain); nothing was signed by this attempt;
 * - not_sent: no connection was made; the request never left;
 * - unknown: anything else (timeout, broken connection, 5xx, a proxy's page): it may have been signed and broadcast.
 */
export type SendFailure = 'refused' | 'not_sent' | 'unknown'

export function classifySendFailure(err: unknown): SendFailure {
  if (err instanceof ServiceUnreachableError) return err.neverConnected ? 'not_sent' : 'unknown'
  if (!(err instanceof CountersignError)) return 'unknown'
  if (!isServiceAnswer(err)) return 'unknown'
  if (err.status >= 400 && err.status < 500) return 'refused'
  // The gateway answers no_rpc_client before it builds anything; any other 5xx may come after the broadcast.
  return err.code === 'no_rpc_client' ? 'refused' : 'unknown'
}

/**
 * sign-and-send of `intent`, repeated with the same intent and token while
 * the answer is unclear. Resolves with the gateway's sign result; rejects with
 * its refusal, with ServiceUnreachableError when no attempt ever reached it,
 * or with SendOutcomeUnknownError when the transaction may exist.
 */
export async function signAndSendSettled(client: CountersignClient, intent: TxIntent, approvalTokenId: string | undefined, o: SignAndSendRetryOptions = {}): Promise<SignAndSendResult> {
  const retries = o.sendRetries ?? DEFAULT_SEND_RETRIES
  if (!Number.isInteger(retries) || retries < 0 || retries > 20) throw new TypeError(`sendRetries must be a whole number from 0 to 20, got ${retries}`)
  const delayMs = checkMs('sendRetryDelayMs', o.sendRetryDelayMs ?? DEFAULT_SEND_RETRY_DELAY_MS)
  const call = { ...(o.sendTimeoutMs !== undefined ? { timeoutMs: checkMs('sendTimeoutMs', o.sendTimeoutMs) } : {}), ...(o.signal ? { signal: o.signal } : {}) }
  // The first failure after which the transaction may exist; from then on no answer but a sign result is conclusive.
  let unsure: unknown
  const unknownOutcome = (attempts: number, last: unknown) => new SendOutcomeUnknownError(intent.id, intent.chain.chainId, attempts, unsure ?? last, last)
  for (let attempt = 1; ; attempt++) {
    o.signal?.throwIfAborted()
    try {
      return await client.signAndSend(intent, approvalTokenId, call)
    } catch (err) {
      // The caller stopped waiting while the request was out: what it did is not known.
      if (o.signal?.aborted) throw unknownOutcome(attempt, err)
      const failure = classifySendFailure(err)
      if (failure === 'unknown') unsure ??= err
      // After an unclear attempt even a refusal proves nothing: that attempt may still be running in the
      // gateway, and the repeat can be refused before it reaches the wallet's queue (a rate limit it counted).
      if (unsure === undefined && failure === 'refused') throw err
      if (attempt > retries) throw unsure === undefined ? err : unknownOutcome(attempt, err)
      try {
        await sleep(delayMs * 2 ** (attempt - 1), o.signal)
      } catch (reason) {
        if (unsure !== undefined) throw unknownOutcome(attempt, reason)
        throw reason
      }
    }
  }
}
