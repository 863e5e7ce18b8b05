import { canonicalUuid, toChecksumAddress, typedSchema, type Address } from '@countersign/shared'
import { simpleErrorBody, simpleErrorSchema, validationErrorSchema } from '@countersign/shared/http/errorBodies'
import { HttpError } from '@countersign/shared/http/errors'
import { bool, closed, described, int, str } from '@countersign/shared/http/schemaParts'
import type { TypedRoutes } from '@countersign/shared/http/typeProvider'
import type { SentTxs } from '../store/sentTxs.js'
import { addressSchema, txHashSchema } from './contractParts.js'
import { uuidInputSchema } from './intentInput.js'

export const intentTxParamsSchema = typedSchema<{ intentId: string }>()({
  type: 'object',
  additionalProperties: false,
  required: ['intentId'],
  properties: { intentId: uuidInputSchema },
})

/**
 * Not in SPEC: what a client whose sign-and-send got no clear answer (a
 * timeout, a dropped connection) needs, by the only thing it has, the intent
 * id. Read from gateway.db's sent transactions (keyed by intent id), not from
 * the audit log, which is not indexed by intent.
 */
export const intentTxRouteSchema = {
  operationId: 'intentTransaction',
  description:
    'The transaction countersign signed for an intent, by intent id: after a sign-and-send whose answer never came, whether it was signed and sent. Sending the same intent again is safe either way: it returns this transaction, sending it again unless it was not mined and its deadline has passed or policy now denies the intent.',
  params: intentTxParamsSchema,
  response: {
    200: described(
      'The signed transaction (when the signer replaced it, the replacement)',
      closed({
        intentId: str,
        chainId: int,
        wallet: addressSchema,
        nonce: int,
        txHash: txHashSchema,
        broadcast: { ...bool, description: 'the node accepted it when countersign last sent it; false while it is being sent or when the node refused it (GET /v1/tx/{hash} says whether it is mined)' },
      }),
    ),
    400: described('intentId is not a UUID', validationErrorSchema),
    404: described('intent_not_signed: nothing was signed for this intent (not sent yet, refused, or still at the signer); its own code, so that a client can tell it from a gateway without this route (not_found)', simpleErrorSchema),
  },
}

export const intentTxRoutes: TypedRoutes<{ sentTxs: SentTxs }> = async (app, { sentTxs }) => {
  app.get('/v1/intents/:intentId/tx', { schema: intentTxRouteSchema }, async (req) => {
    // Stored as the intent routes made it, in lower case: the id in the case the client wrote it finds it too.
    const intentId = canonicalUuid(req.params.intentId)
    const sent = sentTxs.byIntent(intentId)
    if (!sent) {
      throw new HttpError(404, simpleErrorBody('intent_not_signed', `countersign holds no signed transaction for intent ${intentId}: it was not sent yet, was refused, or is still being signed`))
    }
    return { intentId: sent.intentId, chainId: sent.chainId, wallet: toChecksumAddress(sent.wallet as Address), nonce: sent.nonce, txHash: sent.txHash, broadcast: sent.broadcastOk }
  })
}
