import type { FastifyPluginAsync } from 'fastify'
import { txIntentSchema, normalizeIntent, type AuditLog, type TxIntent } from '@countersign/shared'
import type { IntentBuilder } from '../pipeline/intentBuilder.js'
import { policyDeniedBody, type PolicyGate } from '../pipeline/policyGate.js'

export interface BuildRouteOptions {
  audit: AuditLog
  policyGate: PolicyGate
  buildIntent: IntentBuilder
}

export const buildRoutes: FastifyPluginAsync<BuildRouteOptions> = async (app, opts) => {
  app.post('/v1/tx/build', { schema: { body: txIntentSchema } }, async (req, reply) => {
    const intent = normalizeIntent(req.body as TxIntent)
    // Built first: policy checks the contract the transaction really calls
    // (an aggregator quote decides it); a 400 for a bad router comes first too.
    const built = await opts.buildIntent(intent)
    const { decision, audited } = opts.policyGate.decide(intent, { contract: built.contract })
    if (decision.decision === 'deny') {
      await audited
      return reply.code(403).send(policyDeniedBody(decision))
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
