import {
  RpcError,
  RpcTimeoutError,
  RpcUnavailableError,
  SIGNING_REFUSED,
  type SigningRefusalData,
} from '@countersign/shared'
import { approvalRequiredBody, policyDeniedBody } from '@countersign/shared/http/errorBodies'
import { HttpError } from '@countersign/shared/http/errors'

/** Maps what the signer answered to the spec's sign-and-send errors. */
export function signerFailure(err: unknown): HttpError | null {
  if (err instanceof RpcUnavailableError || err instanceof RpcTimeoutError) {
    return new HttpError(503, {
      error: 'signer_unavailable',
      message: 'the signer is not reachable; nothing was signed for this request, retry the same intent later',
    })
  }
  if (!(err instanceof RpcError) || err.code !== SIGNING_REFUSED) return null
  const data = (err.data ?? {}) as Partial<SigningRefusalData>
  switch (data.reason) {
    case 'policy_deny':
      return new HttpError(403, policyDeniedBody(data.reasons ?? [err.message]))
    case 'gas_cost_exceeds_max':
      return new HttpError(403, policyDeniedBody([err.message]))
    case 'missing_approval_token':
      return new HttpError(403, approvalRequiredBody(err.message, data.txRequestHash))
    case 'invalid_approval_token':
      return new HttpError(403, { error: 'invalid_approval_token', message: err.message })
    case 'key_unavailable':
      // The key's hardware token is unreachable for now: like an unreachable signer, nothing was signed and a retry may succeed.
      return new HttpError(503, { error: 'signer_unavailable', message: `key_unavailable: ${err.message}` })
    case 'intent_conflict':
      return new HttpError(409, { error: 'intent_conflict', message: err.message })
    default:
      // key_locked, dev_key_on_remote_chain, tx_mismatch, missing_policy_decision
      return new HttpError(403, { error: 'signing_failed', message: err.message })
  }
}
