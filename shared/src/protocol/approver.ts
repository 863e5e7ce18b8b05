// gateway → approver over approver.sock. The gateway hands over the intent
// and its preflight findings; the approver derives what the operator sees and
// the txRequestHash from the intent itself.
//
// No call waits for a human: requestApproval answers at once with a ticket
// (pending, or the decision when there already is one), and the gateway
// learns decisions by polling approvalUpdates, one short call for all its
// waiting clients. So any number of waiting requests never holds the socket.
import { addressSchema, txHashSchema, txIntentSchema, txRequestSchema, uuidSchema } from '../schemas/index.js'
import type { TxIntent, TxRequest } from '../types.js'

export const APPROVER_SOCKET = 'approver.sock'
/**
 * The approver's HTTP app (dashboard, /v1/approvals/*, the feed), also on a
 * Unix socket beside approver.sock: the gateway forwards operators' requests,
 * their operator token included, only there. A TCP port is anyone's to take
 * while the approver restarts; this directory is not.
 */
export const APPROVER_HTTP_SOCKET = 'approver-http.sock'

/**
 * The bounds requestApproval's params schema puts on what the gateway hands
 * over. Much of it comes from the chain (revert reasons, a token's own
 * symbol(), Transfer events), so from contracts a client may choose:
 * fitApprovalParams brings findings within them before they are sent.
 */
export const APPROVAL_PARAM_LIMITS = {
  text: 1024,
  items: 64,
  policyReasons: 32,
  riskFactorId: 64,
  symbol: 256,
  tokenFacts: 4,
  gasDigits: 20,
} as const

/** A token's own symbol() and decimals() as read from the chain; null when the call failed. */
export interface TokenFact {
  address: string
  symbol: string | null
  decimals: number | null
}

export interface RiskFactor {
  id: string
  weight: number
  detail: string
}

export interface BalanceDiff {
  token: string
  change: string
}

/** What the gateway's preflight found; shown to the operator labelled as such. */
export interface PreflightFindings {
  riskScore: number
  riskFactors: RiskFactor[]
  warnings: string[]
  balanceDiffs: BalanceDiff[]
  gasEstimate: string | null
  simulationSuccess: boolean | null
}

export interface RequestApprovalParams {
  intent: TxIntent
  preflight: PreflightFindings
  policyReasons: string[]
  /** For aggregator swaps only: the quoted transaction, which the approver checks against the intent. */
  txRequest?: TxRequest
  /**
   * The intent's tokens as the chain describes them (symbol(), decimals()),
   * read by the gateway, which has the RPC; absent when the chain has none.
   * The card shows these, never the intent's declared ones.
   */
  tokenFacts?: TokenFact[]
  /** Set only by the gateway's skill sandbox runner: the skill that submitted the intent. */
  skill?: string
  /**
   * Set only by the gateway's skill sandbox runner: a fresh id for this one
   * submitIntent call. A request this call creates is the call's own, and
   * withdrawApproval with this id withdraws it and nothing else; a call that
   * attaches to a request made by someone else owns nothing.
   */
  owner?: string
  /**
   * The distinct named operators the gateway's policy asks for
   * (requireQuorumAbove). The approver reads the policy itself and requires
   * the larger of the two, so a policy file missing on one side never lowers it.
   */
  quorum?: number
  /**
   * Set when the intent was signed and sent before and that transaction can
   * never be mined (another of the wallet's own took its nonce): its hash.
   * The token it used is consumed, so a decision kept from before does not
   * answer this request (unless it was itself given for this replacement);
   * the operator is asked again.
   */
  replacing?: string
}

export type ApprovalOutcome =
  | { approved: true; requestId: string; txRequestHash: string; approvalTokenId: string }
  | { approved: false; requestId: string; txRequestHash: string; reason: 'user_declined' | 'approval_expired' | 'withdrawn' }

/** requestApproval's answer, at once. */
export type ApprovalTicket =
  | { state: 'pending'; requestId: string; txRequestHash: string; expiresAt: number }
  | { state: 'decided'; outcome: ApprovalOutcome }

export interface ApprovalUpdatesParams {
  /** The cursor of the previous answer; null for the first call. */
  cursor: string | null
}

/**
 * Every request that ended since `cursor` (decided, expired, withdrawn).
 * `reset` means the cursor is unknown (the approver restarted, or the cursor
 * is too old): the caller asks requestApproval again for each request it
 * still waits for (same intent attaches, or gets the kept decision).
 */
export interface ApprovalUpdates {
  cursor: string
  reset: boolean
  outcomes: ApprovalOutcome[]
}

/** requestApproval refusals are answered with APPROVAL_REFUSED (errorCodes.ts); `data.reason` says which. */
export { APPROVAL_REFUSED } from './errorCodes.js'

export interface ApprovalRefusalData {
  reason: 'intent_conflict' | 'too_many_pending' | 'quorum_unavailable' | 'signer_unavailable'
}

export const approverMethods = {
  requestApproval: 'requestApproval',
  approvalUpdates: 'approvalUpdates',
  withdrawApproval: 'withdrawApproval',
  verifyOperatorToken: 'verifyOperatorToken',
} as const

/**
 * The gateway asks the approver whether a presented operator token is valid,
 * so only the approver ever holds the token (it may run as another user, with
 * a data directory the gateway cannot read). `token` is the bearer value the
 * client sent, or null when it sent none.
 */
export interface VerifyOperatorTokenParams {
  token: string | null
}

/** required: false when the approver runs with SERVICE_OPERATOR_AUTH=off (then valid is true). */
export interface VerifyOperatorTokenResult {
  required: boolean
  valid: boolean
}

export const verifyOperatorTokenParamsSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['token'],
  properties: { token: { anyOf: [{ type: 'string', maxLength: 1024 }, { type: 'null' }] } },
} as const

/** A signed integer of at most 78 digits (an int256 amount). */
export const BALANCE_CHANGE_PATTERN = '^-?(0|[1-9][0-9]{0,77})$'
export const GAS_ESTIMATE_PATTERN = `^[0-9]{1,${APPROVAL_PARAM_LIMITS.gasDigits}}$`

const riskFactorSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'weight', 'detail'],
  properties: { id: { type: 'string', maxLength: APPROVAL_PARAM_LIMITS.riskFactorId }, weight: { type: 'number' }, detail: { type: 'string', maxLength: APPROVAL_PARAM_LIMITS.text } },
} as const

export const requestApprovalParamsSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['intent', 'preflight', 'policyReasons'],
  properties: {
    intent: txIntentSchema,
    preflight: {
      type: 'object',
      additionalProperties: false,
      required: ['riskScore', 'riskFactors', 'warnings', 'balanceDiffs', 'gasEstimate', 'simulationSuccess'],
      properties: {
        riskScore: { type: 'number', minimum: 0, maximum: 100 },
        riskFactors: { type: 'array', maxItems: APPROVAL_PARAM_LIMITS.items, items: riskFactorSchema },
        warnings: { type: 'array', maxItems: APPROVAL_PARAM_LIMITS.items, items: { type: 'string', maxLength: APPROVAL_PARAM_LIMITS.text } },
        balanceDiffs: {
          type: 'array',
          maxItems: APPROVAL_PARAM_LIMITS.items,
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['token', 'change'],
            properties: { token: addressSchema, change: { type: 'string', pattern: BALANCE_CHANGE_PATTERN } },
          },
        },
        gasEstimate: { anyOf: [{ type: 'string', pattern: GAS_ESTIMATE_PATTERN }, { type: 'null' }] },
        simulationSuccess: { anyOf: [{ type: 'boolean' }, { type: 'null' }] },
      },
    },
    policyReasons: { type: 'array', maxItems: APPROVAL_PARAM_LIMITS.policyReasons, items: { type: 'string', maxLength: APPROVAL_PARAM_LIMITS.text } },
    txRequest: txRequestSchema,
    tokenFacts: {
      type: 'array',
      maxItems: APPROVAL_PARAM_LIMITS.tokenFacts,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['address', 'symbol', 'decimals'],
        properties: {
          address: addressSchema,
          symbol: { anyOf: [{ type: 'string', maxLength: APPROVAL_PARAM_LIMITS.symbol }, { type: 'null' }] },
          decimals: { anyOf: [{ type: 'integer', minimum: 0, maximum: 255 }, { type: 'null' }] },
        },
      },
    },
    skill: { type: 'string', minLength: 1, maxLength: 128 },
    owner: uuidSchema,
    quorum: { type: 'integer', minimum: 2, maximum: 100 },
    replacing: txHashSchema,
  },
} as const

export const approvalUpdatesParamsSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['cursor'],
  properties: { cursor: { anyOf: [{ type: 'string', maxLength: 128 }, { type: 'null' }] } },
} as const

/**
 * A stopped skill run withdraws the request its call created (requestApproval
 * `owner`), never one found by intent id: intent ids are public and a skill
 * chooses its own.
 */
export interface WithdrawApprovalParams {
  owner: string
}

export const withdrawApprovalParamsSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['owner'],
  properties: { owner: uuidSchema },
} as const

const text = { type: 'string' } as const
const outcomeSchema = {
  anyOf: [
    { type: 'object', required: ['approved', 'requestId', 'txRequestHash', 'approvalTokenId'], properties: { approved: { const: true }, requestId: text, txRequestHash: text, approvalTokenId: text } },
    { type: 'object', required: ['approved', 'requestId', 'txRequestHash', 'reason'], properties: { approved: { const: false }, requestId: text, txRequestHash: text, reason: text } },
  ],
} as const

/**
 * What the gateway accepts as requestApproval's and approvalUpdates' answers
 * (the fields it reads, with their types; more are let through). The approver
 * is another process: an answer of another shape is refused as such instead
 * of failing somewhere in the code that reads it.
 */
export const approvalTicketSchema = {
  anyOf: [
    { type: 'object', required: ['state', 'requestId', 'txRequestHash', 'expiresAt'], properties: { state: { const: 'pending' }, requestId: text, txRequestHash: text, expiresAt: { type: 'integer' } } },
    { type: 'object', required: ['state', 'outcome'], properties: { state: { const: 'decided' }, outcome: outcomeSchema } },
  ],
} as const

export const approvalUpdatesSchema = {
  type: 'object',
  required: ['cursor', 'reset', 'outcomes'],
  properties: { cursor: { type: 'string' }, reset: { type: 'boolean' }, outcomes: { type: 'array', items: outcomeSchema } },
} as const

/** Preflight findings when no simulation ran (no RPC for the chain). */
export function noPreflight(): PreflightFindings {
  return { riskScore: 0, riskFactors: [], warnings: [], balanceDiffs: [], gasEstimate: null, simulationSuccess: null }
}
