// Every error body of SPEC "Errors" (and of DESIGN §3/§6 for the codes the
// spec leaves open) maps to its class, and the class keeps the body whole.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CountersignClient } from './client.js'
import {
  ApprovalDeclinedError,
  ApprovalExpiredError,
  ApprovalRequiredError,
  ApprovalWithdrawnError,
  ApproverUnavailableError,
  CountersignError,
  DuplicateSkillError,
  HostNotAllowedError,
  IntentConflictError,
  IntentNotSignedError,
  InternalServiceError,
  InvalidApprovalTokenError,
  KeyUnavailableError,
  NoRpcClientError,
  NotFoundError,
  OperatorAuthRequiredError,
  PolicyDeniedError,
  RequestRefusedError,
  RequestTimeoutError,
  RpcError,
  SandboxUnavailableError,
  ServiceUnreachableError,
  SignerUnavailableError,
  SigningFailedError,
  SkillFileHashMismatchError,
  SkillFilesChangedError,
  SkillHasNoEntryError,
  SkillNotFoundError,
  SkillSchemaError,
  SkillSignatureError,
  SkillStaticScanError,
  TooManyPendingError,
  TooManyRunsError,
  ValidationError,
  errorFromResponse,
} from './errors.js'

const HASH = '0x' + 'ab'.repeat(32)
const decline = (reason: string) => ({
  intentId: '6f1c1c55-6f5e-4a51-9d3c-3f0d1b0e8a11',
  txRequestHash: HASH,
  policyDecision: { decision: 'require_approval', reasons: ['value 500000000000000000 wei is above the approval threshold 0'], policyVersion: '1' },
  approvalRequired: true,
  approved: false,
  reason,
})
const skillFailure = (error: string, extra: Record<string, unknown> = {}) => ({ registered: false, name: 'payroll', manifestHash: '', error, ...extra })

// [what, status, body, class, code]
const cases: Array<[string, number, Record<string, unknown>, new (...a: never[]) => CountersignError, string]> = [
  ['schema validation (any endpoint)', 400, { statusCode: 400, error: 'Bad Request', message: "body/action/amount must match pattern" }, ValidationError, 'validation_failed'],
  ['policy denied at build / approve-request', 403, { error: 'policy_denied', decision: 'deny', reasons: ['chain 10 is not in allowed chains', 'rate limit exceeded: 11 transactions in the last hour, limit 10'], policyVersion: '1' }, PolicyDeniedError, 'policy_denied'],
  ['policy denied at sign time (no decision member)', 403, { error: 'policy_denied', reasons: ['value exceeds max'], policyVersion: '1' }, PolicyDeniedError, 'policy_denied'],
  ['operator declined', 403, decline('user_declined'), ApprovalDeclinedError, 'user_declined'],
  ['approval expired', 403, decline('approval_expired'), ApprovalExpiredError, 'approval_expired'],
  ['approval withdrawn', 403, decline('withdrawn'), ApprovalWithdrawnError, 'withdrawn'],
  ['approval required', 403, { error: 'approval_required', message: 'policy requires approval; call approve-request', txRequestHash: HASH }, ApprovalRequiredError, 'approval_required'],
  ['invalid approval token', 403, { error: 'invalid_approval_token', message: 'token consumed' }, InvalidApprovalTokenError, 'invalid_approval_token'],
  ['signing failed', 403, { error: 'signing_failed', message: 'no unlocked key for 0xf39f' }, SigningFailedError, 'signing_failed'],
  ['host not allowed', 403, { error: 'host_not_allowed', message: 'Host evil.example is not this service' }, HostNotAllowedError, 'host_not_allowed'],
  ['operator auth required', 401, { error: 'operator_auth_required', message: 'deciding needs the operator token' }, OperatorAuthRequiredError, 'operator_auth_required'],
  ['receipt not found', 404, { error: 'not_found', message: `no receipt for ${HASH} (pending or unknown)` }, NotFoundError, 'not_found'],
  ['decide on an expired request', 404, { error: 'not_found', message: 'no pending request abc' }, NotFoundError, 'not_found'],
  ['intent conflict', 409, { error: 'intent_conflict', message: 'intent 6f1c was already used with a different body' }, IntentConflictError, 'intent_conflict'],
  ['too many pending', 429, { error: 'too_many_pending', message: 'wallet 0xf39f already has 5 pending requests' }, TooManyPendingError, 'too_many_pending'],
  ['too many runs', 429, { error: 'too_many_runs', message: '2 skills are running; retry later' }, TooManyRunsError, 'too_many_runs'],
  ['no rpc client', 502, { error: 'no_rpc_client', message: 'no RPC endpoint for chain 10' }, NoRpcClientError, 'no_rpc_client'],
  ['rpc error', 502, { error: 'rpc_error', message: 'chain 8453: header not found' }, RpcError, 'rpc_error'],
  ['signer unavailable', 503, { error: 'signer_unavailable', message: 'the signer is not reachable' }, SignerUnavailableError, 'signer_unavailable'],
  ['key unavailable', 503, { error: 'key_unavailable', message: 'the HSM slot is not reachable' }, KeyUnavailableError, 'key_unavailable'],
  ['approver unavailable', 503, { error: 'approver_unavailable', message: 'the approver is not reachable' }, ApproverUnavailableError, 'approver_unavailable'],
  ['sandbox unavailable', 503, { error: 'sandbox_unavailable', message: 'bubblewrap is not installed' }, SandboxUnavailableError, 'sandbox_unavailable'],
  ['internal error', 500, { error: 'internal_error', message: 'internal error; see the service log' }, InternalServiceError, 'internal_error'],
  ['skill schema', 400, skillFailure('schema_validation_failed', { validationErrors: ['/sandbox/memoryMb must be <= 512'] }), SkillSchemaError, 'schema_validation_failed'],
  ['skill signature', 400, skillFailure('signature_verification_failed', { message: 'the signature does not recover 0xabc' }), SkillSignatureError, 'signature_verification_failed'],
  ['skill file hash', 400, skillFailure('file_hash_mismatch', { hashMismatches: [{ file: 'index.js', expected: 'aa', actual: 'bb' }] }), SkillFileHashMismatchError, 'file_hash_mismatch'],
  ['skill static scan', 400, skillFailure('static_scan_failed', { scanFindings: ['index.js:3 eval'] }), SkillStaticScanError, 'static_scan_failed'],
  ['duplicate skill', 409, skillFailure('duplicate_skill', { message: 'an active skill is already registered as payroll' }), DuplicateSkillError, 'duplicate_skill'],
  ['skill not found', 404, { error: 'skill_not_found', name: 'payroll' }, SkillNotFoundError, 'skill_not_found'],
  ['skill files changed', 409, { error: 'skill_files_changed', message: 'register it again', hashMismatches: [] }, SkillFilesChangedError, 'skill_files_changed'],
  ['skill without entry', 409, { error: 'skill_has_no_entry', message: 'payroll declares no files' }, SkillHasNoEntryError, 'skill_has_no_entry'],
  ['nothing signed for an intent', 404, { error: 'intent_not_signed', message: 'countersign holds no signed transaction for intent 6f1c' }, IntentNotSignedError, 'intent_not_signed'],
  ['a body over the limit, refused before it is read', 413, { statusCode: 413, error: 'Payload Too Large', message: 'body is larger than the limit' }, RequestRefusedError, 'request_refused'],
]

describe('errorFromResponse: every error body of the spec', () => {
  it.each(cases)('%s → its class, with the body intact', (_what, status, body, Class, code) => {
    const err = errorFromResponse(status, body)
    expect(err).toBeInstanceOf(Class)
    expect(err).toBeInstanceOf(CountersignError)
    expect(err.status).toBe(status)
    expect(err.code).toBe(code)
    expect(err.body).toEqual(body)
    expect(err.name).toBe(Class.name)
  })

  it('the classes are all different (no code falls into another code\'s class)', () => {
    const classes = new Set(cases.map(([, status, body]) => errorFromResponse(status, body).constructor))
    const codes = new Set(cases.map(([, , , , code]) => code))
    expect(classes.size).toBe(codes.size)
  })

  it('policy denial: reasons and version readable, the message lists every reason', () => {
    const err = errorFromResponse(403, cases[1]![2]) as PolicyDeniedError
    expect(err.reasons).toEqual(['chain 10 is not in allowed chains', 'rate limit exceeded: 11 transactions in the last hour, limit 10'])
    expect(err.policyVersion).toBe('1')
    expect(err.message).toBe('policy denied: chain 10 is not in allowed chains; rate limit exceeded: 11 transactions in the last hour, limit 10')
  })

  it('decline: intent, hash, reason and the policy reasons that asked for approval', () => {
    const err = errorFromResponse(403, decline('user_declined')) as ApprovalDeclinedError
    expect(err.intentId).toBe('6f1c1c55-6f5e-4a51-9d3c-3f0d1b0e8a11')
    expect(err.txRequestHash).toBe(HASH)
    expect(err.reason).toBe('user_declined')
    expect(err.reasons).toEqual(['value 500000000000000000 wei is above the approval threshold 0'])
    expect(err.message).toBe('the operator declined intent 6f1c1c55-6f5e-4a51-9d3c-3f0d1b0e8a11')
  })

  it('typed accessors of the other bodies', () => {
    expect((errorFromResponse(403, cases[6]![2]) as ApprovalRequiredError).txRequestHash).toBe(HASH)
    expect((errorFromResponse(400, cases[23]![2]) as SkillSchemaError).validationErrors).toEqual(['/sandbox/memoryMb must be <= 512'])
    expect((errorFromResponse(400, cases[25]![2]) as SkillFileHashMismatchError).hashMismatches).toEqual([{ file: 'index.js', expected: 'aa', actual: 'bb' }])
    expect((errorFromResponse(400, cases[26]![2]) as SkillStaticScanError).scanFindings).toEqual(['index.js:3 eval'])
    expect((errorFromResponse(404, cases[28]![2]) as SkillNotFoundError).skillName).toBe('payroll')
    expect(errorFromResponse(502, cases[16]![2]).message).toBe('no_rpc_client (502): no RPC endpoint for chain 10')
    expect(errorFromResponse(502, cases[16]![2]).serviceMessage).toBe('no RPC endpoint for chain 10')
  })

  it('an unknown code or a non-JSON body is still a CountersignError carrying what came', () => {
    const unknown = errorFromResponse(418, { error: 'teapot', message: 'short and stout' })
    expect(unknown.constructor).toBe(CountersignError)
    expect(unknown.code).toBe('teapot')
    expect(unknown.message).toBe('teapot (418): short and stout')
    const html = errorFromResponse(502, '<html>Bad Gateway</html>')
    expect(html.code).toBe('http_502')
    expect(html.body).toEqual({ message: '<html>Bad Gateway</html>' })
    const tooLarge = errorFromResponse(413, { statusCode: 413, error: 'Payload Too Large', message: 'body is larger than the limit' })
    expect(tooLarge.code).toBe('request_refused')
    expect(tooLarge).toBeInstanceOf(RequestRefusedError)
    expect(tooLarge.status).toBe(413)
  })
})

// A code is whatever text came; the names of Object.prototype's members once found Object's own
// (a Number constructor, a toString function) and the client threw a Number or a TypeError.
describe('errorFromResponse: codes that are names of Object.prototype members', () => {
  it.each([{ error: 'constructor' }, { error: '__proto__' }, { error: 'toString' }, { error: 'hasOwnProperty' }, { approved: false, reason: 'valueOf' }])('%j is a plain CountersignError with that code', (body) => {
    let e: unknown
    try {
      e = errorFromResponse(403, JSON.parse(JSON.stringify(body)))
    } catch (thrown) {
      e = thrown
    }
    expect(e).toBeInstanceOf(CountersignError)
    expect((e as CountersignError).constructor).toBe(CountersignError)
    expect((e as CountersignError).code).toBe(body.error ?? body.reason)
  })
})

describe('the client over real HTTP', () => {
  let server: Server
  let url: string
  beforeAll(async () => {
    // A plain HTTP server that answers like the gateway does for these paths.
    server = createServer((req, res) => {
      if (req.url === '/v1/tx/sign-and-send') {
        res.writeHead(403, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'policy_denied', reasons: ['value exceeds max'], policyVersion: '1' }))
      } else if (req.url === '/slow/v1/health') {
        setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}'), 2_000)
      } else if (req.url === '/v1/health') {
        res.writeHead(502, { 'content-type': 'text/html' }).end('<html>Bad Gateway</html>')
      } else {
        res.writeHead(404).end()
      }
    })
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(() => new Promise<void>((r) => server.close(() => r())))

  it('a 403 body reaches the caller as PolicyDeniedError with its reasons', async () => {
    const client = new CountersignClient({ url })
    const err = await client.signAndSend({} as never).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(PolicyDeniedError)
    expect((err as PolicyDeniedError).reasons).toEqual(['value exceeds max'])
  })

  it('a non-JSON error page keeps its text', async () => {
    const err = await new CountersignClient({ url }).health().catch((e: unknown) => e)
    expect(err).toBeInstanceOf(CountersignError)
    expect((err as CountersignError).status).toBe(502)
    expect((err as CountersignError).body.message).toBe('<html>Bad Gateway</html>')
  })

  it('its own timeout is a RequestTimeoutError, a closed port a ServiceUnreachableError', async () => {
    const slow = await new CountersignClient({ url: `${url}/slow`, requestTimeoutMs: 200 }).health().catch((e: unknown) => e)
    expect(slow).toBeInstanceOf(RequestTimeoutError)
    const closed = new CountersignClient({ url: 'http://127.0.0.1:1' })
    const err = await closed.health().catch((e: unknown) => e)
    expect(err).toBeInstanceOf(ServiceUnreachableError)
    expect((err as ServiceUnreachableError).status).toBe(0)
  })
})
