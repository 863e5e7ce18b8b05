import { describe, expect, it } from 'vitest'
import { RpcError, RpcTimeoutError, RpcUnavailableError, SIGNING_REFUSED } from '@countersign/shared'
import { SIGNER_DID_NOT_ANSWER, SIGNER_NOT_REACHED, signerFailure } from './signerErrors.js'

describe('signerFailure', () => {
  it('a timeout says the signature may or may not exist and that retrying the same intent is safe', () => {
    const e = signerFailure(new RpcTimeoutError('sign on /run/signer.sock timed out after 15000 ms'))
    expect(e?.statusCode).toBe(503)
    expect(e?.body).toEqual({ error: 'signer_unavailable', message: SIGNER_DID_NOT_ANSWER })
    expect(SIGNER_DID_NOT_ANSWER).toMatch(/may or may not exist/)
    expect(SIGNER_DID_NOT_ANSWER).toMatch(/Retrying the same intent is safe: signing is idempotent/)
  })

  it('a connection lost after the call was sent is the same case; one that never reached the signer signed nothing', () => {
    expect(signerFailure(new RpcUnavailableError('cannot reach x: connection closed', true))?.body).toEqual({ error: 'signer_unavailable', message: SIGNER_DID_NOT_ANSWER })
    const notSent = signerFailure(new RpcUnavailableError('cannot reach x: no socket file', false))
    expect(notSent?.statusCode).toBe(503)
    expect(notSent?.body).toEqual({ error: 'signer_unavailable', message: SIGNER_NOT_REACHED })
    expect(SIGNER_NOT_REACHED).toMatch(/nothing was signed/)
  })

  it('refusals keep their own mapping; anything else is not the signer', () => {
    expect(signerFailure(new RpcError(SIGNING_REFUSED, 'no token', { reason: 'missing_approval_token', txRequestHash: '0xab' }))?.statusCode).toBe(403)
    expect(signerFailure(new RpcError(-32603, 'internal error'))).toBeNull()
    expect(signerFailure(new Error('x'))).toBeNull()
  })
})
