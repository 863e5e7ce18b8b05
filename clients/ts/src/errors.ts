// Every error the service can answer, as a class that carries the body the
// service sent (SPEC "Errors", DESIGN §3 and §6). A caller catches the class
// it cares about (PolicyDeniedError, ApprovalDeclinedError...) and still has
// the whole body; nothing is reduced to "API error: 400".

export type ErrorBody = Record<string, unknown>

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [])
const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined)

/** Base of every error this client throws for an answer of the service (or its absence: status 0). */
export class CountersignError extends Error {
  override name = 'CountersignError'
  /** The `error` member of the body (or the decline `reason`); `http_<status>` when the body names none. */
  readonly code: string
  constructor(
    /** HTTP status; 0 when no answer arrived. */
    readonly status: number,
    /** The body exactly as the service sent it (parsed JSON; `{message}` for a body that was not JSON). */
    readonly body: ErrorBody,
    message?: string,
  ) {
    super(message ?? describe(status, body))
    this.code = codeOf(status, body)
  }
  /** The service's own message, when its body has one. */
  get serviceMessage(): string | undefined {
    return text(this.body.message)
  }
}

/** What the service refuses before it reads a request, in the validation shape: too large a body (413), a URL too long (414), not JSON (415), headers too large (431). */
const HTTP_LAYER_REFUSALS = new Set([413, 414, 415, 431])

function codeOf(status: number, body: ErrorBody): string {
  if (status === 400 && body.statusCode === 400) return 'validation_failed'
  // Found by review: these read as unknown answers, so a sign-and-send refused before its body was read was
  // retried and ended as "may have been sent".
  if (HTTP_LAYER_REFUSALS.has(status) && body.statusCode === status && typeof body.error === 'string') return 'request_refused'
  return text(body.error) ?? (body.approved === false ? text(body.reason) : undefined) ?? `http_${status}`
}

function describe(status: number, body: ErrorBody): string {
  const code = codeOf(status, body)
  const message = text(body.message)
  return message ? `${code} (${status}): ${message}` : `${code} (${status})`
}

/** 400 in the validation shape `{statusCode, error: "Bad Request", message}`: the request does not match the schema. */
export class ValidationError extends CountersignError {
  override name = 'ValidationError'
}

/**
 * 413, 414, 415 or 431 in the validation shape: the service refused the
 * request before reading it (too large, not JSON); nothing was done.
 */
export class RequestRefusedError extends CountersignError {
  override name = 'RequestRefusedError'
}

/** 403 `policy_denied`: policy refused the intent; `reasons` says why, rule by rule. */
export class PolicyDeniedError extends CountersignError {
  override name = 'PolicyDeniedError'
  get reasons(): string[] {
    return strings(this.body.reasons)
  }
  get policyVersion(): string | undefined {
    return text(this.body.policyVersion)
  }
  constructor(status: number, body: ErrorBody) {
    super(status, body, `policy denied: ${strings(body.reasons).join('; ') || 'no reason given'}`)
  }
}

/** The decline body of approve-request: `{intentId, txRequestHash, policyDecision, approvalRequired, approved: false, reason}`. */
export abstract class ApprovalNotGrantedError extends CountersignError {
  get intentId(): string | undefined {
    return text(this.body.intentId)
  }
  get txRequestHash(): string | undefined {
    return text(this.body.txRequestHash)
  }
  get reason(): string {
    return text(this.body.reason) ?? this.code
  }
  /** The policy reasons that made approval necessary. */
  get reasons(): string[] {
    const decision = this.body.policyDecision as { reasons?: unknown } | undefined
    return strings(decision?.reasons)
  }
}

/** 403 `user_declined`: an operator declined the approval request. */
export class ApprovalDeclinedError extends ApprovalNotGrantedError {
  override name = 'ApprovalDeclinedError'
  constructor(status: number, body: ErrorBody) {
    super(status, body, `the operator declined intent ${text(body.intentId) ?? '?'}`)
  }
}

/** 403 `approval_expired`: nobody decided within the approval lifetime (300 s). */
export class ApprovalExpiredError extends ApprovalNotGrantedError {
  override name = 'ApprovalExpiredError'
  constructor(status: number, body: ErrorBody) {
    super(status, body, `no operator decided on intent ${text(body.intentId) ?? '?'} before the approval request expired`)
  }
}

/** 403 `withdrawn`: the approval request was withdrawn before anyone decided. */
export class ApprovalWithdrawnError extends ApprovalNotGrantedError {
  override name = 'ApprovalWithdrawnError'
  constructor(status: number, body: ErrorBody) {
    super(status, body, `the approval request of intent ${text(body.intentId) ?? '?'} was withdrawn`)
  }
}

/** 403 `approval_required`: sign-and-send without a token for an intent that needs one. */
export class ApprovalRequiredError extends CountersignError {
  override name = 'ApprovalRequiredError'
  get txRequestHash(): string | undefined {
    return text(this.body.txRequestHash)
  }
}

/** 403 `invalid_approval_token`: unknown, expired, consumed, or bound to another intent. */
export class InvalidApprovalTokenError extends CountersignError {
  override name = 'InvalidApprovalTokenError'
}

/** 403 `signing_failed`: the key is missing or locked, or the transaction would fail. */
export class SigningFailedError extends CountersignError {
  override name = 'SigningFailedError'
}

/** 403 `host_not_allowed`: the Host header is not the service's own (DNS-rebinding guard). */
export class HostNotAllowedError extends CountersignError {
  override name = 'HostNotAllowedError'
}

/** 401 `operator_auth_required`: deciding, revoking or registering needs the operator token. */
export class OperatorAuthRequiredError extends CountersignError {
  override name = 'OperatorAuthRequiredError'
}

/** 404 `not_found`: no receipt yet (pending or unknown hash), an unknown or expired approval request, or no such route. */
export class NotFoundError extends CountersignError {
  override name = 'NotFoundError'
}

/** 404 `intent_not_signed` (GET /v1/intents/:intentId/tx): countersign signed nothing for this intent. */
export class IntentNotSignedError extends CountersignError {
  override name = 'IntentNotSignedError'
}

/** 409 `intent_conflict`: this intent id was already used with a different body. */
export class IntentConflictError extends CountersignError {
  override name = 'IntentConflictError'
}

/** 429 `too_many_pending`: too many approval requests wait already (per wallet or in all). */
export class TooManyPendingError extends CountersignError {
  override name = 'TooManyPendingError'
}

/** 429 `too_many_runs`: the skill sandbox runs as many skills as it may. */
export class TooManyRunsError extends CountersignError {
  override name = 'TooManyRunsError'
}

/** 502 `no_rpc_client`: no RPC endpoint is configured for the chain (the message names it). */
export class NoRpcClientError extends CountersignError {
  override name = 'NoRpcClientError'
}

/** 502 `rpc_error`: the chain's node answered with an error (the message carries it). */
export class RpcError extends CountersignError {
  override name = 'RpcError'
}

/** 503 `signer_unavailable`: the signer is not reachable, or did not answer in time (a signature may then exist). Retrying the same intent is safe: signing is idempotent. */
export class SignerUnavailableError extends CountersignError {
  override name = 'SignerUnavailableError'
}

/** 503 `key_unavailable`: the key for the wallet cannot be used right now (e.g. its token or HSM is not reachable). */
export class KeyUnavailableError extends CountersignError {
  override name = 'KeyUnavailableError'
}

/** 503 `approver_unavailable`: the approver is not reachable; nothing was approved. */
export class ApproverUnavailableError extends CountersignError {
  override name = 'ApproverUnavailableError'
}

/** 503 `sandbox_unavailable`: skills cannot run on this host (no sandbox). */
export class SandboxUnavailableError extends CountersignError {
  override name = 'SandboxUnavailableError'
}

/** 500 `internal_error`: a bug in the service; the body has no internals. */
export class InternalServiceError extends CountersignError {
  override name = 'InternalServiceError'
}

/** Skill registration failures share `{registered: false, name, manifestHash: "", error}`. */
export class SkillRegistrationError extends CountersignError {
  override name = 'SkillRegistrationError'
  get skillName(): string | undefined {
    return text(this.body.name)
  }
}

/** 400 `schema_validation_failed`; `validationErrors` lists every problem. */
export class SkillSchemaError extends SkillRegistrationError {
  override name = 'SkillSchemaError'
  get validationErrors(): string[] {
    return strings(this.body.validationErrors)
  }
}

/** 400 `signature_verification_failed`: the signature does not recover publisher.address. */
export class SkillSignatureError extends SkillRegistrationError {
  override name = 'SkillSignatureError'
}

/** 400 `file_hash_mismatch`; `hashMismatches` lists `{file, expected, actual}`. */
export class SkillFileHashMismatchError extends SkillRegistrationError {
  override name = 'SkillFileHashMismatchError'
  get hashMismatches(): Array<{ file: string; expected: string; actual: string | null }> {
    return Array.isArray(this.body.hashMismatches) ? (this.body.hashMismatches as Array<{ file: string; expected: string; actual: string | null }>) : []
  }
}

/** 400 `static_scan_failed`; `scanFindings` lists what the static analysis refused. */
export class SkillStaticScanError extends SkillRegistrationError {
  override name = 'SkillStaticScanError'
  get scanFindings(): string[] {
    return strings(this.body.scanFindings)
  }
}

/** 409 `duplicate_skill`: an active skill already has this name. */
export class DuplicateSkillError extends SkillRegistrationError {
  override name = 'DuplicateSkillError'
}

/** 404 `skill_not_found` `{error, name}`: unknown or revoked skill. */
export class SkillNotFoundError extends CountersignError {
  override name = 'SkillNotFoundError'
  get skillName(): string | undefined {
    return text(this.body.name)
  }
}

/** 409 `skill_files_changed`: the skill's files no longer match its manifest. */
export class SkillFilesChangedError extends CountersignError {
  override name = 'SkillFilesChangedError'
}

/** 409 `skill_has_no_entry`: the manifest declares no file to run. */
export class SkillHasNoEntryError extends CountersignError {
  override name = 'SkillHasNoEntryError'
}

/** No answer at all: connection refused, DNS, reset. status is 0. */
export class ServiceUnreachableError extends CountersignError {
  override name = 'ServiceUnreachableError'
  constructor(url: string, cause: unknown) {
    super(0, { error: 'service_unreachable', message: `no answer from ${urlWithoutCredentials(url)}: ${cause instanceof Error ? cause.message : String(cause)}` })
    this.cause = cause
  }
  /**
   * True when no connection was made (refused, unknown host, no route): the
   * request never left, so the service did nothing. False when the connection
   * broke after it was made (reset, closed): the request may have been
   * received and carried out.
   */
  get neverConnected(): boolean {
    return connectFailed(this.cause)
  }
}

/**
 * `url` as an error message may show it: without user:password@, which the
 * client refuses anyway (an error reaches logs and an MCP tool's result).
 * Anything but a parsed http(s) URL ("alice:pw@host" parses as the scheme
 * "alice:") is shown only when it has no @ that could end credentials.
 */
export function urlWithoutCredentials(url: string): string {
  let parsed: URL | null = null
  try {
    parsed = new URL(url)
  } catch {
    // shown below, or not
  }
  if (parsed && (parsed.protocol === 'http:' || parsed.protocol === 'https:')) {
    if (!parsed.username && !parsed.password) return url
    parsed.username = ''
    parsed.password = ''
    return parsed.href
  }
  return url.includes('@') ? `a URL of ${url.length} characters (not shown: it may hold a password)` : url
}

/** Errors of a connection that was never made (Node's net/dns codes, undici's connect timeout). */
const NOT_CONNECTED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT'])

/** fetch's "fetch failed" carries the socket's error as cause; happy eyeballs an AggregateError of one per address. */
function connectFailed(err: unknown, depth = 0): boolean {
  if (depth > 4 || err === null || typeof err !== 'object') return false
  const { code, errors, cause } = err as { code?: unknown; errors?: unknown; cause?: unknown }
  if (Array.isArray(errors) && errors.length > 0) return errors.every((e) => connectFailed(e, depth + 1))
  if (typeof code === 'string') return NOT_CONNECTED.has(code)
  return connectFailed(cause, depth + 1)
}

/** A call's own timeout ran out (the caller's signal did not abort it). status is 0. */
export class RequestTimeoutError extends CountersignError {
  override name = 'RequestTimeoutError'
  constructor(readonly request: string, readonly timeoutMs: number) {
    super(0, { error: 'request_timeout', message: `${request}: no answer within ${timeoutMs} ms` })
  }
}

/** Signed, but the node refused the broadcast (sign result `broadcast: false`). Sending the same intent again retries the same transaction. */
export class BroadcastFailedError extends CountersignError {
  override name = 'BroadcastFailedError'
  constructor(readonly signResult: { intentId: string; txHash: string; broadcastError: string | null }) {
    super(200, { error: 'broadcast_failed', message: `signed ${signResult.txHash} but the broadcast failed: ${signResult.broadcastError ?? 'unknown error'}` })
  }
}

/** The receipt did not appear in time; the transaction may still be mined. */
export class ReceiptTimeoutError extends CountersignError {
  override name = 'ReceiptTimeoutError'
  constructor(readonly txHash: string, waitedMs: number) {
    super(0, { error: 'receipt_timeout', message: `no receipt for ${txHash} after ${Math.round(waitedMs / 1000)} s; it may still be mined` })
  }
}

/**
 * A 2xx answer whose body is not what the endpoint sends (a proxy's page, a
 * truncated body, another service on the port). `body` holds what came.
 */
export class UnexpectedResponseError extends CountersignError {
  override name = 'UnexpectedResponseError'
  constructor(readonly request: string, status: number, problem: string, received: unknown) {
    super(status, { error: 'unexpected_response', message: `${request}: the answer is not the service's (${problem})`, received: preview(received) })
  }
}

/** An answer larger than the client reads (ClientOptions.maxResponseBytes): dropped unread past the limit. */
export class ResponseTooLargeError extends CountersignError {
  override name = 'ResponseTooLargeError'
  constructor(readonly request: string, status: number, readonly limitBytes: number) {
    super(status, { error: 'response_too_large', message: `${request}: the answer is larger than ${limitBytes} bytes; not read` })
  }
}

/**
 * The transaction was signed and broadcast, and what came after failed
 * (reading its receipt): it exists and may be mined. Do not send a new intent
 * for the same payment: check this one (txStatus), or send the same intent
 * again, which returns this same transaction.
 */
export class SentButUnconfirmedError extends CountersignError {
  override name = 'SentButUnconfirmedError'
  constructor(readonly sent: { intentId: string; txHash: string }, readonly chainId: number, readonly after: unknown) {
    super(0, {
      error: 'sent_unconfirmed',
      message: `transaction ${sent.txHash} (intent ${sent.intentId}) was signed and broadcast on chain ${chainId}, but its receipt could not be read: ${after instanceof Error ? after.message : String(after)}. It may be mined: check it with txStatus; sending the same intent again returns this same transaction, while a new intent would pay a second time`,
      txHash: sent.txHash,
      intentId: sent.intentId,
      chainId,
    })
    this.cause = after
  }
}

/**
 * sign-and-send of this intent got no clear answer, even asked again with the
 * same intent (a timeout, a connection that broke after the request left, the
 * signer or a proxy not answering): the transaction MAY have been signed and
 * broadcast. Do not send a new intent for this payment, which would pay a
 * second time. Send this same intent again (the gateway answers a repeat with
 * the transaction it already sent, if any), or look the intent up:
 * client.findSent(intentId) answers the transaction signed for it, if any.
 */
export class SendOutcomeUnknownError extends CountersignError {
  override name = 'SendOutcomeUnknownError'
  constructor(readonly intentId: string, readonly chainId: number, readonly attempts: number, readonly firstFailure: unknown, readonly lastFailure: unknown) {
    super(0, {
      error: 'send_outcome_unknown',
      message: `sign-and-send of intent ${intentId} on chain ${chainId} got no clear answer in ${attempts} attempts (first: ${messageOf(firstFailure)}; last: ${messageOf(lastFailure)}). The transaction may have been signed and broadcast: do not send a new intent for this payment; send this same intent again, which returns the transaction already sent if there is one, or ask what was signed for it (findSent, GET /v1/intents/${intentId}/tx)`,
      intentId,
      chainId,
      attempts,
    })
    this.cause = firstFailure
  }
}

const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err))

/** At most 2,000 characters of what came, for the error body. */
function preview(received: unknown): unknown {
  const text = typeof received === 'string' ? received : JSON.stringify(received) ?? String(received)
  return text.length > 2000 ? `${text.slice(0, 2000)}…` : received
}

type ErrorClass = new (status: number, body: ErrorBody) => CountersignError

/**
 * Code (the body's `error`, or a decline's `reason`) to class. Without a
 * prototype, and read only through Object.hasOwn: a code is whatever text the
 * answer carries, and "constructor" or "toString" must not find Object's own.
 */
const BY_CODE: Readonly<Record<string, ErrorClass>> = Object.assign(Object.create(null) as Record<string, ErrorClass>, {
  validation_failed: ValidationError,
  request_refused: RequestRefusedError,
  policy_denied: PolicyDeniedError,
  user_declined: ApprovalDeclinedError,
  approval_expired: ApprovalExpiredError,
  withdrawn: ApprovalWithdrawnError,
  approval_required: ApprovalRequiredError,
  invalid_approval_token: InvalidApprovalTokenError,
  signing_failed: SigningFailedError,
  host_not_allowed: HostNotAllowedError,
  operator_auth_required: OperatorAuthRequiredError,
  not_found: NotFoundError,
  intent_not_signed: IntentNotSignedError,
  intent_conflict: IntentConflictError,
  too_many_pending: TooManyPendingError,
  too_many_runs: TooManyRunsError,
  no_rpc_client: NoRpcClientError,
  rpc_error: RpcError,
  signer_unavailable: SignerUnavailableError,
  key_unavailable: KeyUnavailableError,
  approver_unavailable: ApproverUnavailableError,
  sandbox_unavailable: SandboxUnavailableError,
  internal_error: InternalServiceError,
  schema_validation_failed: SkillSchemaError,
  signature_verification_failed: SkillSignatureError,
  file_hash_mismatch: SkillFileHashMismatchError,
  static_scan_failed: SkillStaticScanError,
  duplicate_skill: DuplicateSkillError,
  skill_not_found: SkillNotFoundError,
  skill_files_changed: SkillFilesChangedError,
  skill_has_no_entry: SkillHasNoEntryError,
})

/** The class of a code the service sends; undefined for any other text. */
const classOf = (code: string): ErrorClass | undefined => (Object.hasOwn(BY_CODE, code) ? BY_CODE[code] : undefined)

/** Whether the error is an answer of the service itself: a code it sends, not a proxy's page or an unknown text. */
export const isServiceAnswer = (err: CountersignError): boolean => err.status > 0 && classOf(err.code) !== undefined

/**
 * The error for a non-2xx answer. `body` is the parsed JSON body, or the raw
 * text when it was not JSON. An unknown code still gives a CountersignError
 * with the body, so a newer service never turns into "API error: 400".
 */
export function errorFromResponse(status: number, body: unknown): CountersignError {
  const b: ErrorBody =
    body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as ErrorBody) : { message: typeof body === 'string' && body ? body : `HTTP ${status} without a JSON body` }
  const Class = classOf(codeOf(status, b))
  return Class ? new Class(status, b) : new CountersignError(status, b)
}
