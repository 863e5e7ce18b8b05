import type { PendingRequest } from '../requests/pendingRequests.js'

/** SPEC "Approval request": requestId, summary {action, riskScore, warnings, …}, ttlSeconds. */
export function pendingView(p: PendingRequest, nowMs: number) {
  return { requestId: p.requestId, summary: p.summary, ttlSeconds: Math.max(0, Math.ceil((p.expiresAt - nowMs) / 1000)) }
}
