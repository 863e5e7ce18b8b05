import type { FastifyPluginAsync } from 'fastify'
import { SERVICE_VERSION, type Clock } from '@countersign/shared'

export const healthRoutes: FastifyPluginAsync<{ clock: Clock; startedAtMs: number }> = async (app, opts) => {
  app.get('/v1/health', async () => ({
    status: 'ok',
    version: SERVICE_VERSION,
    uptime: Math.max(0, (opts.clock() - opts.startedAtMs) / 1000),
  }))
}
