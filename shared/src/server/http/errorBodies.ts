// The error bodies of SPEC "Errors", each built by one function and described
// by one schema beside it. Routes send these (directly or through HttpError)
// and list the schemas as their response schemas, which fastify serialises
// with and the OpenAPI document shows; a body built anywhere else is a bug.
import { STATUS_CODES } from 'node:http'
import { POLICY_VERSION } from '../../constants.js'
import { typedSchema } from '../../schemas/typed.js'

const str = { type: 'string' } as const
const strings = { type: 'array', items: str } as const

/** SPEC "Schema validation error (400)". */
export interface ValidationErrorBody {
  statusCode: 400
  error: 'Bad Request'
  message: string
}
export const validationErrorBody = (message: string): ValidationErrorBody => ({ statusCode: 400, error: 'Bad Request', message })
export const validationErrorSchema = typedSchema<ValidationErrorBody>()({
  description: 'The body, path or query does not match the schema; message names the failing path',
  type: 'object',
  additionalProperties: false,
  required: ['statusCode', 'error', 'message'],
  properties: { statusCode: { const: 400 }, error: { const: 'Bad Request' }, message: str },
})

/**
 * What the HTTP layer answers before any route runs, in the validation shape
 * with its own status: a body too large (413) or of another media type
 * (415), a path segment too long (414), a body that is not JSON (400).
 */
export interface HttpErrorBody {
  statusCode: number
  error: string
  message: string
}
export const httpErrorBody = (statusCode: number, message: string): HttpErrorBody => ({ statusCode, error: STATUS_CODES[statusCode] ?? 'Error', message })
export const httpErrorSchema = typedSchema<HttpErrorBody>()({
  type: 'object',
  additionalProperties: false,
  required: ['statusCode', 'error', 'message'],
  properties: { statusCode: { type: 'integer', minimum: 400, maximum: 499 }, error: str, message: str },
})

/** SPEC "Simple error": {error (code), message}, plus fields a route adds (approval_required's txRequestHash). */
export interface SimpleErrorBody {
  error: string
  message: string
}
export const simpleErrorBody = (error: string, message: string): SimpleErrorBody => ({ error, message })
export const simpleErrorSchema = typedSchema<SimpleErrorBody>()({
  type: 'object',
  additionalProperties: false,
  required: ['error', 'message'],
  properties: { error: str, message: str },
})

/**
 * SPEC "Policy error (403)", the same body wherever policy denies: build,
 * approve-request (also for a gas cost above constraints.maxGasWei) and
 * sign-and-send (the gateway's re-check and the signer's own).
 */
export interface PolicyDeniedBody {
  error: 'policy_denied'
  decision: 'deny'
  reasons: string[]
  policyVersion: string
}
export const policyDeniedBody = (reasons: readonly string[]): PolicyDeniedBody => ({
  error: 'policy_denied',
  decision: 'deny',
  reasons: [...reasons],
  policyVersion: POLICY_VERSION,
})
export const policyDeniedSchema = typedSchema<PolicyDeniedBody>()({
  description:
    'Reason texts in rule order. Audit reason codes: chain_not_allowed, token_not_in_allowlist, contract_not_in_allowlist, recipient_not_in_allowlist (also for an approve spender), value_exceeds_max, approval_exceeds_max (also an approve above the token maxAmount), unlimited_approval_denied, rate_limit_exceeded, risk_score_too_high, deadline_passed; gas_cost_exceeds_max when estimated gas times max fee exceeds constraints.maxGasWei; no_signer_key when approve-request finds that the signer holds no key for the wallet. Approval reasons: value_above_approval_threshold, token_amount_above_approval_threshold, unlimited_approval, simulation_unavailable.',
  type: 'object',
  additionalProperties: false,
  required: ['error', 'decision', 'reasons', 'policyVersion'],
  properties: { error: { const: 'policy_denied' }, decision: { const: 'deny' }, reasons: strings, policyVersion: str },
})

/** sign-and-send without the token policy requires: a simple error that also names the transaction to approve. */
export interface ApprovalRequiredBody {
  error: 'approval_required'
  message: string
  txRequestHash?: string
}
export const approvalRequiredBody = (message: string, txRequestHash: string | undefined): ApprovalRequiredBody => ({
  error: 'approval_required',
  message,
  ...(txRequestHash !== undefined ? { txRequestHash } : {}),
})

/** Every 403 sign-and-send answers: policy_denied, approval_required (with txRequestHash), invalid_approval_token, signing_failed. */
export const signingRefusedSchema = typedSchema<PolicyDeniedBody | SimpleErrorBody | ApprovalRequiredBody>()({
  type: 'object',
  additionalProperties: false,
  required: ['error'],
  properties: {
    error: str,
    message: str,
    txRequestHash: str,
    decision: { const: 'deny' },
    reasons: strings,
    policyVersion: str,
  },
})

/** GET and DELETE /v1/skills/:name for a name with no active skill. */
export interface SkillNotFoundBody {
  error: 'skill_not_found'
  name: string
}
export const skillNotFoundBody = (name: string): SkillNotFoundBody => ({ error: 'skill_not_found', name })
export const skillNotFoundSchema = typedSchema<SkillNotFoundBody>()({
  type: 'object',
  additionalProperties: false,
  required: ['error', 'name'],
  properties: { error: { const: 'skill_not_found' }, name: str },
})
