import type { WebhookDispatcher } from '../webhooks/dispatcher.js'
import type { ApprovalChannel } from './channel.js'

/**
 * SERVICE_APPROVAL_CHANNELS=…,webhook: a new request is announced to the
 * webhook receiver at once (approval_requested, from the audit log through the
 * outbox), and its end as approval_decided, approval_expired or
 * approval_withdrawn. The channel
 * never decides: a webhook carries nothing that can approve, so the operator
 * answers on the dashboard, countersign-approve or the terminal.
 */
export function webhookChannel(dispatcher: Pick<WebhookDispatcher, 'wake'>): ApprovalChannel {
  return {
    name: 'webhook',
    present() {
      // approval_requested is committed to the audit log before channels are presented.
      dispatcher.wake()
    },
    withdraw() {
      dispatcher.wake()
    },
  }
}
