import { typedSchema, type AuditLog } from '@countersign/shared'
import type { TypedRoutes } from '@countersign/shared/http/typeProvider'

export const HISTORY_DEFAULT_LIMIT = 20

/** SPEC: limit defaults to 20 and is clamped into 1..100; this endpoint has no error responses. */
export function clampHistoryLimit(raw: unknown): number {
  if (typeof raw !== 'string' || raw.trim() === '') return HISTORY_DEFAULT_LIMIT
  const n = Number(raw)
  if (!Number.isFinite(n)) return HISTORY_DEFAULT_LIMIT
  return Math.min(100, Math.max(1, Math.trunc(n)))
}

/** Any value is accepted (SPEC: history answers no errors); clampHistoryLimit reads what it can. */
export const historyQuerySchema = typedSchema<{ limit?: unknown }>()({
  type: 'object',
  properties: { limit: { description: 'default 20, clamped to 1..100' } },
})

export const historyRoutes: TypedRoutes<{ audit: AuditLog }> = async (app, opts) => {
  app.get('/v1/approvals/history', { schema: { querystring: historyQuerySchema } }, async (req) => ({
    events: opts.audit.list({ limit: clampHistoryLimit(req.query.limit) }),
  }))
}
