import {
  RpcError,
  RpcTimeoutError,
  RpcUnavailableError,
  SIGNING_REFUSED,
  type SigningRefusalData,
} from '@countersign/shared'
import { approvalRequiredBody, policyDeniedBody, simpleErrorBody } from '@countersign/shared/http/errorBodies'
import { HttpError } from '@countersign/shared/http/errors'

/** The call never reached the signer. */
export const SIGNER_NOT_REACHED = 'the signer is not reachable; nothing was sent to it, so nothing was signed for this request. Retry the same intent later'

/**
 * A timeout, or a connection lost after the call was sent: the signer may
 * have signed, or may still sign. Signing is idempotent per intent (the signer
 * keeps each intent's signature and returns it again), so a retry of the same
 * intent never signs twice.
 */
export const SIGNER_DID_NOT_ANSWER =
  'the signer did not answer in time: the signature may or may not exist. Retrying the same intent is safe: signing is idempotent, so a retry returns the stored signature if there is one and signs only once otherwise'

/** Maps what the signer answered to the spec's sign-and-send errors. */
export function signerFailure(err: unknown): HttpError | null {
  if (err instanceof RpcTimeoutError || (err instanceof RpcUnavailableError && err.sent)) {
    // The call reached the signer, which may still sign (or have signed) it.
    return new HttpError(503, simpleErrorBody('signer_unavailable', SIGNER_DID_NOT_ANSWER))
  }
  if (err instanceof RpcUnavailableError) {
    return new HttpError(503, simpleErrorBody('signer_unavailable', SIGNER_NOT_REACHED))
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
      return new HttpError(403, simpleErrorBody('invalid_approval_token', err.message))
    case 'key_unavailable':
      // The key's hardware token is unreachable for now: like an unreachable signer, nothing was signed and a retry may succeed.
      return new HttpError(503, simpleErrorBody('signer_unavailable', `key_unavailable: ${err.message}`))
    case 'intent_conflict':
      return new HttpError(409, simpleErrorBody('intent_conflict', err.message))
    default:
      // key_locked, dev_key_on_remote_chain, tx_mismatch, missing_policy_decision
      return new HttpError(403, simpleErrorBody('signing_failed', err.message))
  }
}
