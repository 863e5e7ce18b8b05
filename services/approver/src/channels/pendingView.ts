import { renderCard } from '../card/renderCard.js'
import { quorumText, quorumView } from '../quorum/quorumVotes.js'
import type { PendingRequest } from '../requests/pendingRequests.js'

/**
 * SPEC "Approval request": requestId, summary {action, riskScore, warnings, …},
 * ttlSeconds; plus the card every view lays out, and (additive) the quorum
 * state of a request that needs several named operators.
 */
export function pendingView(p: PendingRequest, nowMs: number) {
  return {
    requestId: p.requestId,
    summary: p.summary,
    card: renderCard(p.summary, p.quorum ? quorumText(p.quorum) : null),
    ttlSeconds: Math.max(0, Math.ceil((p.expiresAt - nowMs) / 1000)),
    ...(p.quorum ? { quorum: quorumView(p.quorum) } : {}),
  }
}
