// Operator authority for the gateway's own operator routes (skill
// registration and revocation). The gateway never holds the operator token:
// it hands the presented bearer value to the approver over approver.sock and
// takes its answer. That works the same whether the three processes share one
// data directory or run as one user each, where the gateway cannot read the
// approver's operator-token file.
import { approverMethods, type VerifyOperatorTokenResult } from '@countersign/shared'
import type { preHandlerAsyncHookHandler } from 'fastify'
import { simpleErrorBody } from '@countersign/shared/http/errorBodies'
import { HttpError } from '@countersign/shared/http/errors'

export interface ApproverVerifier {
  call<T>(method: string, params: unknown, opts?: { timeoutMs?: number }): Promise<T>
}

/** How an operator request was authorised: the token, or nothing because the approver runs with SERVICE_OPERATOR_AUTH=off. */
export type OperatorGrant = 'operator_token' | 'operator_auth_off'

export type OperatorCheck = { ok: true; grant: OperatorGrant } | { ok: false; status: 401 | 503; error: string; message: string }

export interface OperatorAuthority {
  /** `authorization`: the request's Authorization header; `what`: the action, for the message ("registering a skill"). */
  check(authorization: string | undefined, what: string): Promise<OperatorCheck>
}

/** The bearer value of an `Authorization: Bearer <token>` header, or null. */
export function bearerToken(header: string | undefined): string | null {
  const m = /^Bearer\s+(\S{1,1024})$/i.exec(header ?? '')
  return m ? m[1]! : null
}

export function approverOperatorAuthority(approver: ApproverVerifier): OperatorAuthority {
  return {
    async check(authorization, what) {
      let answer: VerifyOperatorTokenResult
      try {
        answer = await approver.call<VerifyOperatorTokenResult>(approverMethods.verifyOperatorToken, { token: bearerToken(authorization) }, { timeoutMs: 5000 })
      } catch {
        // Fail closed: without the approver nobody can vouch for the token.
        return { ok: false, status: 503, error: 'approver_unavailable', message: `${what} needs the operator token, which the approver checks; the approver is not reachable over approver.sock` }
      }
      if (!answer.required) return { ok: true, grant: 'operator_auth_off' }
      if (answer.valid) return { ok: true, grant: 'operator_token' }
      return { ok: false, status: 401, error: 'operator_auth_required', message: `${what} needs the operator token: Authorization: Bearer <token> (the approver's DATA_DIR/operator-token, or SERVICE_OPERATOR_TOKEN)` }
    },
  }
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the requireOperator preHandler: how this operator-only request was authorised. */
    operatorGrant: OperatorGrant | null
  }
}

/**
 * The preHandler of every operator-only gateway route: a 401 (or 503 when the
 * approver cannot be asked) before the handler runs, else req.operatorGrant
 * says how the request was authorised (for the audit). The route group must
 * `decorateRequest('operatorGrant', null)`.
 */
export function requireOperator(authority: OperatorAuthority, what: string): preHandlerAsyncHookHandler {
  return async (req) => {
    const r = await authority.check(req.headers.authorization, what)
    if (!r.ok) throw new HttpError(r.status, simpleErrorBody(r.error, r.message))
    req.operatorGrant = r.grant
  }
}
