import type { ApprovalChannel, ChannelHost } from './channel.js'

/** SERVICE_APPROVAL_MODE=auto: approves every request at once (testing only; the approver warns loudly). */
export function autoChannel(host: ChannelHost): ApprovalChannel {
  return {
    name: 'auto',
    async present(request) {
      await host.decide(request.requestId, true, 'auto')
    },
    withdraw() {},
  }
}
