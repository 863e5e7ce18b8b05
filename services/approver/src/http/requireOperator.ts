import type { preHandlerAsyncHookHandler } from 'fastify'
import { simpleErrorBody } from '@countersign/shared/http/errorBodies'
import { HttpError } from '@countersign/shared/http/errors'
import { isOperatorTokenShape, MIN_OPERATOR_TOKEN_LENGTH, MAX_OPERATOR_TOKEN_LENGTH } from '@countersign/shared'
import type { OperatorIdentity, Operators } from '../operators/operators.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the requireOperator preHandler: the operator who sent this request ({name: null} for the single token or auth off). */
    operator: OperatorIdentity | null
  }
}

/**
 * The preHandler of every operator-only approver route: 401 unless the bearer
 * token names an operator (anyone when operators is null: SERVICE_OPERATOR_AUTH=off).
 * The app must `decorateRequest('operator', null)`.
 */
export function requireOperator(operators: Operators | null, what: string): preHandlerAsyncHookHandler {
  return async (req) => {
    const bearer = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1]
    const who = operators === null ? { name: null } : operators.identify(bearer)
    if (who === null) {
      // A named operator whose token is too short (its hash is in the file) is told why it never works (found by review).
      const shape = bearer !== undefined && !isOperatorTokenShape(bearer) ? `; operator tokens are ${MIN_OPERATOR_TOKEN_LENGTH} to ${MAX_OPERATOR_TOKEN_LENGTH} printable characters without spaces, and this one is not` : ''
      throw new HttpError(401, simpleErrorBody('operator_auth_required', `${what} needs the operator token: Authorization: Bearer <token> (DATA_DIR/operator-token)${shape}`))
    }
    req.operator = who
  }
}
