import type { PendingRequest } from '../requests/pendingRequests.js'
import type { ApprovalChannel, ChannelHost } from './channel.js'

/** Asks on the approver's terminal; resolves true for yes; rejects when not answered or aborted. */
export type TerminalPrompt = (request: PendingRequest, signal: AbortSignal) => Promise<boolean>

/**
 * SERVICE_APPROVAL_MODE=cli: each request is asked on the approver's
 * terminal. A request decided elsewhere (the dashboard) or expired is taken
 * off the prompt; an unanswered prompt leaves the request pending.
 */
export function terminalChannel(host: ChannelHost, prompt: TerminalPrompt): ApprovalChannel {
  const asking = new Map<string, AbortController>()
  return {
    name: 'terminal',
    present(request) {
      const asked = new AbortController()
      asking.set(request.requestId, asked)
      prompt(request, asked.signal)
        .then((yes) => host.decide(request.requestId, yes, 'terminal'))
        .catch(() => {
          /* not answered in time, or ended elsewhere: the request stays where it is */
        })
        .finally(() => asking.delete(request.requestId))
    },
    withdraw(requestId) {
      asking.get(requestId)?.abort()
    },
  }
}
