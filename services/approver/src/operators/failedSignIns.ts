import type { AuditLog } from '@countersign/shared'
import type { Operators } from './operators.js'

/**
 * Where a presented operator token was refused: the decide route (also
 * reached through the gateway's proxy), the dashboard feed's sign-in, or the
 * gateway asking on behalf of its own operator routes (skill registration and
 * revocation).
 */
export type SignInPlace = 'decide' | 'dashboard' | 'gateway_operator_route'

/** The audit event: one row for a first refusal, then at most one row a window summing the rest. */
export const SIGN_IN_FAILED_EVENT = 'operator_sign_in_failed'

export interface SignInFailureSummary {
  /** Refusals this row stands for. */
  count: number
  places: Partial<Record<SignInPlace, number>>
  /** Epoch ms of the first and the last refusal it counts. */
  firstAt: number
  lastAt: number
}

export interface FailedSignIns {
  /** A presented token that named no operator. */
  record(place: SignInPlace): void
  /** Writes what is counted and not yet written, and stops the window's timer (shutdown). */
  close(): Promise<void>
}

export interface FailedSignInsDeps {
  audit: Pick<AuditLog, 'append'>
  clock: () => number
  /** At most one row this often while refusals go on (60 s). */
  windowMs?: number
  /** Told of each row as it is written (the approver logs it). */
  onRecorded?: (summary: SignInFailureSummary) => void
  /** A row that could not be written (it is not retried). */
  onError?: (err: Error) => void
}

/**
 * Refused operator tokens become audit rows, so an operator reading the
 * history or the dashboard's feed sees that someone is guessing. Nothing is
 * locked out or slowed: every caller reaches the approver from this host (or
 * through the gateway), so a lockout could not tell the guesser from the
 * operator and would be a way to stop all approvals, and a delay is spent in
 * parallel. Operator tokens are at least 32 characters (and the generated one
 * is 256 random bits), which is what makes guessing hopeless; this makes it
 * seen. The first refusal after a quiet window is written at once; those that
 * follow are summed into one row a window, so a flood of guesses costs the
 * audit log a row a minute, not a row a guess.
 */
export function createFailedSignIns(deps: FailedSignInsDeps): FailedSignIns {
  const windowMs = deps.windowMs ?? 60_000
  let counted: SignInFailureSummary | null = null
  let timer: NodeJS.Timeout | null = null
  let writes: Promise<void> = Promise.resolve()
  let closed = false

  const write = (summary: SignInFailureSummary): void => {
    // Handled at once: a refusal waiting behind an earlier, slower write would otherwise be unhandled, and stop the process.
    const done = deps.audit
      .append({ intentId: 'system', event: SIGN_IN_FAILED_EVENT, data: { ...summary } })
      .then(
        () => deps.onRecorded?.(summary),
        (err: Error) => deps.onError?.(err),
      )
      // A throwing logger must not leave a rejection behind either; the row itself is written.
      .catch(() => undefined)
    writes = writes.then(() => done)
  }

  // The window ends: what it counted is written, and a new window starts only if there was any.
  const windowEnds = (): void => {
    timer = null
    if (counted === null) return
    write(counted)
    counted = null
    startWindow()
  }

  const startWindow = (): void => {
    timer = setTimeout(windowEnds, windowMs)
    timer.unref()
  }

  return {
    record(place) {
      // After close the audit log is closing too: nothing more is counted.
      if (closed) return
      const now = deps.clock()
      if (timer === null) {
        write({ count: 1, places: { [place]: 1 }, firstAt: now, lastAt: now })
        startWindow()
        return
      }
      counted ??= { count: 0, places: {}, firstAt: now, lastAt: now }
      counted.count += 1
      counted.places[place] = (counted.places[place] ?? 0) + 1
      counted.lastAt = now
    },
    async close() {
      closed = true
      if (timer !== null) clearTimeout(timer)
      timer = null
      if (counted !== null) write(counted)
      counted = null
      await writes
    },
  }
}

/** The log line of a row: "3 refused operator tokens (decide 2, dashboard 1) from … to …". */
export function describeSignInFailures(summary: SignInFailureSummary): string {
  const places = Object.entries(summary.places)
    .map(([place, n]) => `${place} ${n}`)
    .join(', ')
  const when = summary.count === 1 ? `at ${new Date(summary.firstAt).toISOString()}` : `from ${new Date(summary.firstAt).toISOString()} to ${new Date(summary.lastAt).toISOString()}`
  return `${summary.count} refused operator token${summary.count === 1 ? '' : 's'} (${places}) ${when}; audited as ${SIGN_IN_FAILED_EVENT}`
}

/**
 * The same operators, with every presented token they refuse recorded under
 * `place`. Nothing presented (no header, no token in the message) is not a
 * guess and is not recorded.
 */
export function recordingRefusals(operators: Operators, failures: FailedSignIns, place: SignInPlace): Operators {
  return {
    named: operators.named,
    identify(presented) {
      const who = operators.identify(presented)
      if (who === null && presented !== undefined && presented !== null && presented !== '') failures.record(place)
      return who
    },
  }
}
