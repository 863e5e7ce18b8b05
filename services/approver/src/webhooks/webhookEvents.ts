import type { AuditEventRow } from '@countersign/shared'
import type { WEBHOOK_EVENT_TYPES } from '@countersign/shared/http/approvalsContract'

/** The kinds a webhook receiver gets, named as in DESIGN §6 "webhooks". */
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number]

export interface WebhookEvent {
  /** The audit event's id: stable across retries, so a receiver can drop duplicates. */
  id: string
  type: WebhookEventType
  createdAt: string
  intentId: string
  data: Record<string, unknown>
}

/**
 * Which audit events become webhooks, and which of their fields travel. Fields
 * are copied by name, never wholesale: the approval token id (which the agent
 * redeems at sign time) and anything added to an audit event later stay out
 * of a request to a third party. A webhook carries nothing that can approve.
 */
const SOURCES: Record<string, { type: WebhookEventType; fields: string[]; extra?: Record<string, unknown> }> = {
  approval_requested: { type: 'approval_requested', fields: ['requestId', 'action', 'riskScore', 'mode', 'quorum'] },
  // A named operator's vote on a quorum request (requireQuorumAbove): who, and how many approvals of how many.
  approval_vote: { type: 'approval_vote', fields: ['requestId', 'action', 'operator', 'approved', 'counted', 'approvals', 'required', 'via'] },
  approval_granted: { type: 'approval_decided', fields: ['requestId', 'action', 'riskScore', 'via', 'operator', 'approvedBy'], extra: { approved: true } },
  approval_rejected: { type: 'approval_decided', fields: ['requestId', 'action', 'reason', 'via', 'operator'], extra: { approved: false } },
  approval_expired: { type: 'approval_expired', fields: ['requestId', 'action'] },
  // The request ended undecided by an operator: its skill run stopped (run_stopped), a request to replace
  // a lost transaction took its place (superseded), or auto mode's grant could not be made durable
  // (token_not_durable). Without it a receiver that was told approval_requested kept showing the request
  // as waiting (found by review).
  approval_withdrawn: { type: 'approval_withdrawn', fields: ['requestId', 'reason'] },
  tx_broadcast: { type: 'tx_broadcast', fields: ['txHash', 'chainId'] },
  broadcast_failed: { type: 'broadcast_failed', fields: ['txHash', 'error'] },
}

export const SOURCE_AUDIT_EVENTS = Object.keys(SOURCES)

export function webhookEventOf(row: AuditEventRow): WebhookEvent | null {
  const source = SOURCES[row.event]
  if (!source) return null
  let parsed: Record<string, unknown>
  try {
    parsed = JSON.parse(row.data) as Record<string, unknown>
  } catch {
    parsed = {}
  }
  const data: Record<string, unknown> = { ...source.extra }
  for (const f of source.fields) if (parsed[f] !== undefined) data[f] = parsed[f]
  return { id: row.id, type: source.type, createdAt: new Date(row.timestamp).toISOString(), intentId: row.intent_id, data }
}
