import type { AuditLog } from '@countersign/shared'
import { historyRouteSchema } from '@countersign/shared/http/approvalsContract'
import type { TypedRoutes } from '@countersign/shared/http/typeProvider'

export const HISTORY_DEFAULT_LIMIT = 20

/** SPEC: limit defaults to 20 and is clamped into 1..100; this endpoint has no error responses. */
export function clampHistoryLimit(raw: unknown): number {
  if (typeof raw !== 'string' || raw.trim() === '') return HISTORY_DEFAULT_LIMIT
  const n = Number(raw)
  if (!Number.isFinite(n)) return HISTORY_DEFAULT_LIMIT
  return Math.min(100, Math.max(1, Math.trunc(n)))
}

export const historyRoutes: TypedRoutes<{ audit: AuditLog }> = async (app, opts) => {
  app.get('/v1/approvals/history', { schema: historyRouteSchema }, async (req) => ({
    events: opts.audit.list({ limit: clampHistoryLimit(req.query.limit), malformed: 'show' }),
  }))
}
