import type { FastifyPluginAsync } from 'fastify'
import { buildTransaction, txIntentSchema, type AuditLog, type RouterTable, type TxIntent } from '@countersign/shared'
import { policyDeniedBody, type PolicyGate } from '../pipeline/policyGate.js'

export interface BuildRouteOptions {
  audit: AuditLog
  policyGate: PolicyGate
  routers: RouterTable
}

export const buildRoutes: FastifyPluginAsync<BuildRouteOptions> = async (app, opts) => {
  app.post('/v1/tx/build', { schema: { body: txIntentSchema } }, async (req, reply) => {
    const intent = req.body as TxIntent
    const decision = await opts.policyGate.check(intent)
    if (decision.decision === 'deny') return reply.code(403).send(policyDeniedBody(decision))
    const built = buildTransaction(intent, opts.routers)
    await opts.audit.append({
      intentId: intent.id,
      event: 'tx_built',
      data: { txRequestHash: built.txRequestHash, description: built.description },
    })
    return {
      intentId: intent.id,
      txRequestHash: built.txRequestHash,
      description: built.description,
      txRequest: built.txRequest,
    }
  })
}
