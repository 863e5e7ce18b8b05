import type { AuditLog } from '@countersign/shared'
import { historyRouteSchema } from '@countersign/shared/http/approvalsContract'
import { historyListOptions } from '@countersign/shared/http/historyQuery'
import type { TypedRoutes } from '@countersign/shared/http/typeProvider'

/** SPEC: newest first, limit clamped into 1..100, no error responses; `intentId` narrows it to one intent's events. */
export const historyRoutes: TypedRoutes<{ audit: AuditLog }> = async (app, opts) => {
  app.get('/v1/approvals/history', { schema: historyRouteSchema }, async (req) => ({
    events: opts.audit.list({ ...historyListOptions(req.query), malformed: 'show' }),
  }))
}
