import type { PendingRequest } from '../requests/pendingRequests.js'
import type { ApprovalChannel, ChannelHost } from './channel.js'
import { AuditWriteError } from '@countersign/shared'

/**
 * Asks on the approver's terminal, then carries the answer out with
 * `carryOut` and only then prints its outcome (with the note `carryOut`
 * resolves with, if any). Resolves with the answer once carried out; rejects
 * when not answered or aborted, and with DecisionNotCarriedOut when
 * `carryOut` failed.
 */
export type TerminalPrompt = (request: PendingRequest, signal: AbortSignal, carryOut: (approved: boolean) => Promise<string | void>) => Promise<boolean>

/** The operator answered, and the decision was not carried out; `askAgain`: the request is pending again. */
export class DecisionNotCarriedOut extends Error {
  constructor(
    readonly reason: unknown,
    readonly askAgain: boolean,
  ) {
    super(`not carried out: ${(reason as Error)?.message ?? String(reason)}`)
    this.name = 'DecisionNotCarriedOut'
  }
}

/**
 * SERVICE_APPROVAL_MODE=cli: each request is asked on the approver's
 * terminal. A request decided elsewhere (the dashboard) or expired is taken
 * off the prompt; an unanswered prompt leaves the request pending. What the
 * terminal prints after an answer is what became of it (found by review:
 * "approved" was printed first, and a request the signer could not mint a
 * token for went back on the list unseen): carried out; carried out with its
 * audit rows committed but their fsync failed (the decision holds: the
 * approval service announced it); not carried out because the request had
 * ended meanwhile (expired, decided elsewhere: not asked again); or not
 * carried out and pending again (the signer was down, the audit write
 * failed): asked again.
 */
export function terminalChannel(host: ChannelHost, prompt: TerminalPrompt): ApprovalChannel {
  const asking = new Map<string, AbortController>()
  const carryOut = async (requestId: string, yes: boolean): Promise<string | void> => {
    try {
      await host.decide(requestId, yes, 'terminal')
    } catch (err) {
      if (err instanceof AuditWriteError && err.committed) return `recorded, but ${err.message}`
      throw new DecisionNotCarriedOut(err, (err as { code?: unknown }).code !== 'not_found')
    }
  }
  const ask = (request: PendingRequest) => {
    const asked = new AbortController()
    asking.set(request.requestId, asked)
    prompt(request, asked.signal, (yes) => carryOut(request.requestId, yes))
      .then(
        () => false,
        // Not answered in time, or ended elsewhere: the request stays where it is.
        (err: unknown) => err instanceof DecisionNotCarriedOut && err.askAgain && !asked.signal.aborted,
      )
      .then((again) => {
        if (asking.get(request.requestId) === asked) asking.delete(request.requestId)
        if (again) ask(request)
      })
  }
  return {
    name: 'terminal',
    present(request) {
      ask(request)
    },
    withdraw(requestId) {
      asking.get(requestId)?.abort()
    },
  }
}
