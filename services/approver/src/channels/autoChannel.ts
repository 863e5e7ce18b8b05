import type { ApprovalChannel } from './channel.js'

/**
 * SERVICE_APPROVAL_MODE=auto: approves every request at once (testing only;
 * the approver warns loudly). The approval service carries the approval out
 * itself (approvesAtOnce), so there is nothing to show and nothing to take back.
 */
export function autoChannel(): ApprovalChannel {
  return {
    name: 'auto',
    approvesAtOnce: 'auto',
    present() {},
    withdraw() {},
  }
}
