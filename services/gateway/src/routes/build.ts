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
    const { decision, audited } = opts.policyGate.decide(intent)
    if (decision.decision === 'deny') {
      await audited
      return reply.code(403).send(policyDeniedBody(decision))
    }
    let built
    try {
      built = buildTransaction(intent, opts.routers)
    } catch (err) {
      await audited
      throw err
    }
    // Both events share one group commit; both are durable before the answer.
    await Promise.all([
      audited,
      opts.audit.append({
        intentId: intent.id,
        event: 'tx_built',
        data: { txRequestHash: built.txRequestHash, description: built.description },
      }),
    ])
    return {
      intentId: intent.id,
      txRequestHash: built.txRequestHash,
      description: built.description,
      txRequest: built.txRequest,
    }
  })
}
