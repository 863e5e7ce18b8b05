import type { AuditLog } from '@countersign/shared'
import { clampHistoryLimit, historyRouteSchema } from '@countersign/shared/http/approvalsContract'
import type { TypedRoutes } from '@countersign/shared/http/typeProvider'

export const historyRoutes: TypedRoutes<{ audit: AuditLog }> = async (app, opts) => {
  app.get('/v1/approvals/history', { schema: historyRouteSchema }, async (req) => ({
    events: opts.audit.list({ limit: clampHistoryLimit(req.query.limit), malformed: 'show' }),
  }))
}
