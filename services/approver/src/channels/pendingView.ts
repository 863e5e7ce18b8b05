import { renderCard } from '../card/renderCard.js'
import type { PendingRequest } from '../requests/pendingRequests.js'

/**
 * SPEC "Approval request": requestId, summary {action, riskScore, warnings, …},
 * ttlSeconds; plus the card every view lays out.
 */
export function pendingView(p: PendingRequest, nowMs: number) {
  return { requestId: p.requestId, summary: p.summary, card: renderCard(p.summary), ttlSeconds: Math.max(0, Math.ceil((p.expiresAt - nowMs) / 1000)) }
}
