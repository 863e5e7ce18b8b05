import type { PendingRequest } from '../requests/pendingRequests.js'
import type { ApprovalChannel, ChannelHost } from './channel.js'

/**
 * Asks on the approver's terminal, then carries the answer out with
 * `carryOut` and only then prints its outcome. Resolves with the answer once
 * carried out; rejects when not answered or aborted, and with
 * DecisionNotCarriedOut when `carryOut` failed.
 */
export type TerminalPrompt = (request: PendingRequest, signal: AbortSignal, carryOut: (approved: boolean) => Promise<unknown>) => Promise<boolean>

/** The operator answered, and the decision could not be carried out (the signer was down, the audit write failed). */
export class DecisionNotCarriedOut extends Error {
  constructor(readonly reason: unknown) {
    super(`not carried out: ${(reason as Error)?.message ?? String(reason)}`)
    this.name = 'DecisionNotCarriedOut'
  }
}

/**
 * SERVICE_APPROVAL_MODE=cli: each request is asked on the approver's
 * terminal. A request decided elsewhere (the dashboard) or expired is taken
 * off the prompt; an unanswered prompt leaves the request pending. An answer
 * that could not be carried out puts the request back on the list, and it is
 * asked again here (before, the terminal had printed "approved" and moved on,
 * and in cli mode alone nobody was asked again).
 */
export function terminalChannel(host: ChannelHost, prompt: TerminalPrompt): ApprovalChannel {
  const asking = new Map<string, AbortController>()
  const ask = (request: PendingRequest) => {
    const asked = new AbortController()
    asking.set(request.requestId, asked)
    prompt(request, asked.signal, (yes) => host.decide(request.requestId, yes, 'terminal'))
      .catch((err: unknown) => {
        // Not answered in time, or ended elsewhere: the request stays where it is. Not carried out and not
        // ended meanwhile (ending it withdraws it here, which aborts `asked`): it is pending again.
        if (err instanceof DecisionNotCarriedOut && !asked.signal.aborted) return 'again'
        return undefined
      })
      .then((next) => {
        if (asking.get(request.requestId) === asked) asking.delete(request.requestId)
        if (next === 'again') ask(request)
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
