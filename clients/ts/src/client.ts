// A typed client for every endpoint of the countersign API (SPEC
// "Endpoints"), on fetch alone. Non-2xx answers become the error classes of
// ./errors.ts with the service's body; nothing is swallowed or renamed.
import type {
  Address,
  ApprovalResult,
  Balance,
  BuildResult,
  DecideResult,
  HealthResult,
  HistoryResult,
  IntentTransaction,
  PendingApproval,
  PendingList,
  PreflightResult,
  Receipt,
  SignAndSendResult,
  SkillListEntry,
  SkillRegistered,
  SkillRevoked,
  SkillRunResult,
  TxIntent,
} from '@countersign/shared'
import { NATIVE_TOKEN_ADDRESS } from '@countersign/shared/constants'
import { readAtMost } from '@countersign/shared/http/readAtMost'
import { approveAndSend, waitForApproval, waitForReceipt, type ApproveAndSendOptions, type SendOutcome, type WaitForApprovalOptions } from './approveAndSend.js'
import { IntentNotSignedError, NotFoundError, RequestTimeoutError, ResponseTooLargeError, ServiceUnreachableError, UnexpectedResponseError, errorFromResponse } from './errors.js'
import { anyArray, anyObject, approvalShape, balanceShape, decideShape, intentTxShape, pendingListShape, preflightShape, receiptShape, signAndSendShape, type ShapeCheck } from './responseShapes.js'

export const DEFAULT_URL = 'http://127.0.0.1:3100'
/** Calls that do not wait for a human answer well within this. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000
/**
 * sign-and-send waits longer: the gateway reads the chain several times, asks
 * the signer and broadcasts, each node call up to 10 s and tried twice, and a
 * sign-and-send given up on may still have been carried out.
 */
export const DEFAULT_SEND_TIMEOUT_MS = 120_000
/** The largest answer read: every answer of the service is far smaller (history's 100 events, a skill's output). */
export const DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024
/** setTimeout's largest delay; a longer one fires at once. */
const MAX_TIMER_MS = 2 ** 31 - 1

export interface ClientOptions {
  /** Base URL of the gateway; default http://127.0.0.1:3100. */
  url?: string
  /** Needed only for operator calls (decide, revokeSkill, registerSkill without a trusted publisher). */
  operatorToken?: string
  /** Per-call timeout for calls that do not wait for an operator; default 30 s. */
  requestTimeoutMs?: number
  /** Timeout of one sign-and-send call; default 120 s. */
  sendTimeoutMs?: number
  /** Another fetch (a test's, a proxy's); default globalThis.fetch. */
  fetch?: typeof fetch
  /** Answers larger than this are not read (ResponseTooLargeError); default 8 MiB. */
  maxResponseBytes?: number
}

/** A whole number of milliseconds from 1 to 2^31-1 (what a timer can wait), or a TypeError naming the option. */
export function checkMs(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1 || value > MAX_TIMER_MS) throw new TypeError(`${name} must be a whole number of milliseconds from 1 to ${MAX_TIMER_MS}, got ${value}`)
  return value
}

/**
 * What is wrong with a service URL that carries credentials (user:password@),
 * or null. countersign takes none in its URL (operator calls send
 * operatorToken in a header); fetch refuses such a URL on every request, and
 * the URL, password included, would go into each error message, an MCP
 * tool's result and the logs (found by review). The wording never repeats
 * the URL. A URL that does not parse is left to fetch, as before.
 */
export function serviceUrlProblem(url: string): string | null {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return null
  }
  if (!parsed.username && !parsed.password) return null
  return `must not contain a user name or password (user:password@host; not shown here): countersign takes no credentials in its URL (operator calls send operatorToken in a header); give the gateway's address alone, such as ${DEFAULT_URL}`
}

export interface CallOptions {
  signal?: AbortSignal
  /** Overrides the client's per-call timeout. */
  timeoutMs?: number
}

const NATIVE = 'native'
export type BalanceToken = Address | typeof NATIVE

export class CountersignClient {
  readonly url: string
  private readonly fetchImpl: typeof fetch
  private readonly timeoutMs: number
  private readonly sendTimeoutMs: number
  private readonly operatorToken: string | undefined
  private readonly maxResponseBytes: number

  constructor(opts: ClientOptions = {}) {
    const urlProblem = serviceUrlProblem(opts.url ?? DEFAULT_URL)
    if (urlProblem) throw new TypeError(`url ${urlProblem}`)
    this.url = (opts.url ?? DEFAULT_URL).replace(/\/+$/, '')
    this.fetchImpl = opts.fetch ?? globalThis.fetch
    this.timeoutMs = checkMs('requestTimeoutMs', opts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS)
    this.sendTimeoutMs = checkMs('sendTimeoutMs', opts.sendTimeoutMs ?? DEFAULT_SEND_TIMEOUT_MS)
    this.operatorToken = opts.operatorToken
    const max = opts.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES
    if (!Number.isSafeInteger(max) || max < 1) throw new TypeError(`maxResponseBytes must be a positive whole number, got ${max}`)
    this.maxResponseBytes = max
  }

  /**
   * One HTTP call; resolves with the parsed body of a 2xx, rejects with a
   * CountersignError otherwise. `check` names what is wrong with a 2xx body
   * that is not the endpoint's (UnexpectedResponseError).
   */
  async request<T>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown, o: CallOptions & { operator?: boolean; check?: ShapeCheck } = {}): Promise<T> {
    const timeoutMs = o.timeoutMs === undefined ? this.timeoutMs : checkMs('timeoutMs', o.timeoutMs)
    const timer = AbortSignal.timeout(timeoutMs)
    const signal = o.signal ? AbortSignal.any([o.signal, timer]) : timer
    const headers: Record<string, string> = { accept: 'application/json' }
    if (body !== undefined) headers['content-type'] = 'application/json'
    if (o.operator && this.operatorToken) headers.authorization = `Bearer ${this.operatorToken}`
    const what = `${method} ${path}`
    let res: Response
    let raw: string | null
    try {
      // The gateway never redirects: a redirect would send the intent (and an operator token) to another address.
      res = await this.fetchImpl(this.url + path, { method, headers, signal, redirect: 'error', ...(body !== undefined ? { body: JSON.stringify(body) } : {}) })
      raw = await readAtMost(res, this.maxResponseBytes)
    } catch (err) {
      if (o.signal?.aborted) throw o.signal.reason ?? err
      if (timer.aborted) throw new RequestTimeoutError(what, timeoutMs)
      throw new ServiceUnreachableError(this.url, err)
    }
    if (raw === null) throw new ResponseTooLargeError(what, res.status, this.maxResponseBytes)
    let parsed: unknown = raw
    try {
      parsed = raw ? JSON.parse(raw) : undefined
    } catch {
      // Not JSON (a proxy's page): kept as text for the error.
    }
    if (!res.ok) throw errorFromResponse(res.status, parsed)
    const problem = (o.check ?? anyObject)(parsed)
    if (problem) throw new UnexpectedResponseError(what, res.status, problem, parsed)
    return parsed as T
  }

  health(o?: CallOptions): Promise<HealthResult> {
    return this.request('GET', '/v1/health', undefined, o)
  }

  /** The OpenAPI 3.1 document of the running service. */
  openapi(o?: CallOptions): Promise<Record<string, unknown>> {
    return this.request('GET', '/v1/openapi.json', undefined, o)
  }

  /** Policy check and the unsigned transaction. */
  build(intent: TxIntent, o?: CallOptions): Promise<BuildResult> {
    return this.request('POST', '/v1/tx/build', intent, o)
  }

  /** Simulation, balance changes and risk score. */
  preflight(intent: TxIntent, o?: CallOptions): Promise<PreflightResult> {
    return this.request('POST', '/v1/tx/preflight', intent, { ...o, check: preflightShape })
  }

  /**
   * One approve-request. In web mode the service holds it until an operator
   * decides; `timeoutMs` (default: the client's) bounds this one call. For the
   * whole wait, use approveAndSend or waitForApproval, which retry.
   */
  approveRequest(intent: TxIntent, o?: CallOptions): Promise<ApprovalResult> {
    return this.request('POST', '/v1/tx/approve-request', intent, { ...o, check: approvalShape })
  }

  /**
   * One sign-and-send (timeout: sendTimeoutMs unless `timeoutMs` says). A
   * RequestTimeoutError here does not mean nothing was sent: send the same
   * intent again (the gateway answers a repeat with the transaction already
   * sent), as approveAndSend does, never a new one.
   */
  signAndSend(intent: TxIntent, approvalTokenId?: string, o?: CallOptions): Promise<SignAndSendResult> {
    const body = { intent, ...(approvalTokenId ? { approvalTokenId } : {}) }
    return this.request('POST', '/v1/tx/sign-and-send', body, { ...o, timeoutMs: o?.timeoutMs ?? this.sendTimeoutMs, check: signAndSendShape })
  }

  /** The receipt; NotFoundError while the transaction is pending or unknown. */
  receipt(txHash: string, o: CallOptions & { chainId?: number } = {}): Promise<Receipt> {
    return this.request('GET', `/v1/tx/${encodeURIComponent(txHash)}${query({ chainId: o.chainId })}`, undefined, { ...o, check: receiptShape })
  }

  /** `token` is an ERC-20 address, or "native" (or the pseudo address) for the chain's currency. */
  balance(token: BalanceToken, account: Address, o: CallOptions & { chainId?: number } = {}): Promise<Balance> {
    const t = token === NATIVE ? NATIVE_TOKEN_ADDRESS : token
    return this.request('GET', `/v1/balance/${encodeURIComponent(t)}/${encodeURIComponent(account)}${query({ chainId: o.chainId })}`, undefined, { ...o, check: balanceShape })
  }

  pending(o?: CallOptions): Promise<PendingList> {
    return this.request('GET', '/v1/approvals/pending', undefined, { ...o, check: pendingListShape })
  }

  /** The pending approval request of one intent, if it is waiting; the id in either case (the service lists it lower-cased). */
  async pendingFor(intentId: string, o?: CallOptions): Promise<PendingApproval | undefined> {
    const { pending } = await this.pending(o)
    const wanted = intentId.toLowerCase()
    return pending.find((p) => p.summary.intentId?.toLowerCase() === wanted)
  }

  /**
   * Operator call: needs operatorToken. On a request that needs a quorum of
   * named operators, an approval short of it answers `decided: false` with
   * the votes in `quorum`: the request is still waiting for the others.
   */
  decide(requestId: string, approved: boolean, o?: CallOptions): Promise<DecideResult> {
    return this.request('POST', `/v1/approvals/${encodeURIComponent(requestId)}/decide`, { approved }, { ...o, operator: true, check: decideShape })
  }

  history(o: CallOptions & { limit?: number } = {}): Promise<HistoryResult> {
    return this.request('GET', `/v1/approvals/history${query({ limit: o.limit })}`, undefined, o)
  }

  /**
   * The transaction countersign signed for an intent, by the intent's id
   * (GET /v1/intents/:intentId/tx, not in SPEC); undefined when nothing was
   * signed for it (not sent yet, refused, or still at the signer). What to
   * ask after a sign-and-send that got no clear answer.
   */
  async findSent(intentId: string, o?: CallOptions): Promise<IntentTransaction | undefined> {
    try {
      return await this.request('GET', `/v1/intents/${encodeURIComponent(intentId)}/tx`, undefined, { ...o, check: intentTxShape })
    } catch (err) {
      // Only the route's own answer means "nothing signed"; a plain not_found is a gateway without the route,
      // which knows nothing of it either way (found by review: read as "nothing signed", it invited a second payment).
      if (err instanceof IntentNotSignedError) return undefined
      throw err
    }
  }

  registerSkill(manifest: Record<string, unknown>, o?: CallOptions): Promise<SkillRegistered> {
    return this.request('POST', '/v1/skills/register', manifest, { ...o, operator: true })
  }

  listSkills(o?: CallOptions): Promise<SkillListEntry[]> {
    return this.request('GET', '/v1/skills', undefined, { ...o, check: anyArray })
  }

  getSkill(name: string, o?: CallOptions): Promise<Record<string, unknown>> {
    return this.request('GET', `/v1/skills/${encodeURIComponent(name)}`, undefined, o)
  }

  /** Operator call: needs operatorToken. */
  revokeSkill(name: string, o?: CallOptions): Promise<SkillRevoked> {
    return this.request('DELETE', `/v1/skills/${encodeURIComponent(name)}`, undefined, { ...o, operator: true })
  }

  /** `pending` while no receipt exists (not yet mined, or unknown), else the receipt. */
  async txStatus(txHash: string, o: CallOptions & { chainId?: number } = {}): Promise<{ state: 'pending' } | { state: 'mined'; receipt: Receipt }> {
    try {
      return { state: 'mined', receipt: await this.receipt(txHash, o) }
    } catch (err) {
      if (err instanceof NotFoundError) return { state: 'pending' }
      throw err
    }
  }

  /** Polls the receipt until it exists (ReceiptTimeoutError after timeoutMs, default 120 s). */
  waitForReceipt(txHash: string, o?: { chainId?: number; timeoutMs?: number; pollMs?: number; signal?: AbortSignal }): Promise<Receipt> {
    return waitForReceipt(this, txHash, o)
  }

  /** approve-request in short attaching attempts until allowed, approved, declined, denied or expired. */
  waitForApproval(intent: TxIntent, o?: WaitForApprovalOptions): Promise<ApprovalResult> {
    return waitForApproval(this, intent, o)
  }

  /** Approval (waiting for the operator when needed), signature, broadcast and receipt of one intent. */
  approveAndSend(intent: TxIntent, o?: ApproveAndSendOptions): Promise<SendOutcome> {
    return approveAndSend(this, intent, o)
  }

  runSkill(name: string, input?: unknown, o?: CallOptions): Promise<SkillRunResult> {
    return this.request('POST', `/v1/skills/${encodeURIComponent(name)}/run`, input === undefined ? {} : { input }, { timeoutMs: 120_000, ...o })
  }
}

function query(params: Record<string, number | undefined>): string {
  const entries = Object.entries(params).filter((e): e is [string, number] => e[1] !== undefined)
  return entries.length ? '?' + new URLSearchParams(entries.map(([k, v]): [string, string] => [k, String(v)])).toString() : ''
}
