import { SERVICE_VERSION, type Clock } from '@countersign/shared'
import { closed, described, num, str } from '@countersign/shared/http/schemaParts'
import type { TypedRoutes } from '@countersign/shared/http/typeProvider'

export const healthRouteSchema = {
  operationId: 'health',
  response: { 200: described('Alive', closed({ status: { const: 'ok' }, version: str, uptime: { ...num, description: 'seconds' } })) },
}

export const healthRoutes: TypedRoutes<{ clock: Clock; startedAtMs: number }> = async (app, opts) => {
  app.get('/v1/health', { schema: healthRouteSchema }, async () => ({
    status: 'ok',
    version: SERVICE_VERSION,
    uptime: Math.max(0, (opts.clock() - opts.startedAtMs) / 1000),
  }))
}
