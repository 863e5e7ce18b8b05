import { txRequestSchema, normalizeIntent, type AuditLog } from '@countersign/shared'
import { policyDeniedBody, policyDeniedSchema, simpleErrorSchema, validationErrorSchema } from '@countersign/shared/http/errorBodies'
import { closed, described, str } from '@countersign/shared/http/schemaParts'
import type { TypedRoutes } from '@countersign/shared/http/typeProvider'
import type { IntentBuilder } from '../pipeline/intentBuilder.js'
import type { PolicyGate } from '../pipeline/policyGate.js'
import type { ReservedIntents } from '../pipeline/reservedIntents.js'
import { txHashSchema } from './contractParts.js'
import { txIntentInputSchema } from './intentInput.js'

export interface BuildRouteOptions {
  audit: AuditLog
  policyGate: PolicyGate
  buildIntent: IntentBuilder
  reserved: ReservedIntents
}

export const buildRouteSchema = {
  operationId: 'build',
  body: txIntentInputSchema,
  response: {
    200: described('Built', closed({ intentId: str, txRequestHash: txHashSchema, description: str, txRequest: txRequestSchema })),
    400: validationErrorSchema,
    403: described('Policy denied', policyDeniedSchema),
    409: described('intent_conflict: an approval request holds this intent id for a different body (until that request and its token expire)', simpleErrorSchema),
  },
}

export const buildRoutes: TypedRoutes<BuildRouteOptions> = async (app, opts) => {
  app.post('/v1/tx/build', { schema: buildRouteSchema }, async (req, reply) => {
    const intent = normalizeIntent(req.body)
    opts.reserved.refuseAnotherBody(intent)
    // Built first: policy checks the contract the transaction really calls
    // (an aggregator quote decides it); a 400 for a bad router comes first too.
    const built = await opts.buildIntent(intent)
    const { decision, audited } = opts.policyGate.decide(intent, { contract: built.contract })
    if (decision.decision === 'deny') {
      await audited
      return reply.code(403).send(policyDeniedBody(decision.reasons))
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
