import type { WebhookOutbox } from './outbox.js'
import { signatureHeader } from './signature.js'

export interface WebhookTarget {
  url: string
  secret: string
  /** First retry after this long, doubling each time up to an hour (SERVICE_WEBHOOK_BACKOFF_MS). */
  backoffBaseMs: number
}

/** DESIGN §6: retried for 24 h, then given up (status failed, on the dashboard). */
export const GIVE_UP_AFTER_MS = 24 * 60 * 60_000
const MAX_BACKOFF_MS = 60 * 60_000
const ATTEMPT_TIMEOUT_MS = 10_000

/** When the next attempt goes out after `attempts` failed ones, or null once the 24 h are over. */
export function nextAttemptAt(createdAt: number, attempts: number, now: number, baseMs: number, giveUpAfterMs = GIVE_UP_AFTER_MS): number | null {
  const at = now + Math.min(MAX_BACKOFF_MS, baseMs * 2 ** Math.max(0, attempts - 1))
  return at - createdAt > giveUpAfterMs ? null : at
}

export interface WebhookDispatcher {
  /** Look at the audit log now rather than at the next poll (a request was just presented). */
  wake(): void
  stop(): Promise<void>
}

/**
 * Tails the audit log into the outbox and delivers it, one delivery at a time
 * in audit order: a receiver that is down holds back the later events, which
 * then arrive in the order they happened.
 */
export function startWebhookDispatcher(deps: {
  outbox: WebhookOutbox
  target: WebhookTarget
  clock: () => number
  pollMs?: number
  onError?: (err: Error) => void
}): WebhookDispatcher {
  const { outbox, target, clock } = deps
  const pollMs = deps.pollMs ?? 250
  let stopped = false
  let timer: NodeJS.Timeout | undefined
  let running: Promise<void> = Promise.resolve()
  let busy = false

  async function attempt(body: string): Promise<string | null> {
    const t = Math.floor(clock() / 1000)
    try {
      const res = await fetch(target.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-countersign-signature': signatureHeader(target.secret, t, body), 'x-countersign-event-id': (JSON.parse(body) as { id: string }).id },
        body,
        redirect: 'error',
        signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
      })
      // Only the status counts. The body is dropped unread (the connection with
      // it): reading it would let a receiver hold the approver for the whole
      // timeout, or fill its memory, with an answer that never ends.
      await res.body?.cancel().catch(() => undefined)
      return res.ok ? null : `HTTP ${res.status}`
    } catch (err) {
      // fetch says "fetch failed"; its cause says why (ECONNREFUSED, unexpected redirect…).
      const cause = (err as { cause?: { code?: string; message?: string } }).cause
      return cause?.code ?? cause?.message ?? (err as Error).message
    }
  }

  async function tick(): Promise<void> {
    outbox.pull(clock(), (problem) => deps.onError?.(new Error(`not sent as a webhook: ${problem}`)))
    for (;;) {
      if (stopped) return
      const head = outbox.head()
      if (!head || head.nextAttemptAt > clock()) return
      const failure = await attempt(head.body)
      const now = clock()
      if (failure === null) outbox.delivered(head.seq, now)
      else {
        const retryAt = nextAttemptAt(head.createdAt, head.attempts + 1, now, target.backoffBaseMs)
        outbox.attemptFailed(head.seq, failure, retryAt)
        if (retryAt !== null) return
      }
    }
  }

  const schedule = (delayMs = pollMs) => {
    if (stopped) return
    clearTimeout(timer)
    timer = setTimeout(() => {
      busy = true
      running = tick()
        .catch((err: unknown) => deps.onError?.(err as Error))
        .finally(() => {
          busy = false
          schedule()
        })
    }, delayMs)
  }
  schedule()

  return {
    wake() {
      // A tick in flight reads the log again when it is done (at the next poll); otherwise go now.
      if (!busy) schedule(0)
    },
    async stop() {
      stopped = true
      clearTimeout(timer)
      await running
    },
  }
}
