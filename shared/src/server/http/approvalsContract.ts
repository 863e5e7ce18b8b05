// The route schemas of the approver's HTTP API (/v1/approvals/*, /approval-ui).
// The approver serves these routes with them; the gateway forwards the same
// paths (and serves history itself) with them too, and its OpenAPI document
// is generated from them. They live in shared/ because a service never
// imports another service.
import { typedSchema } from '../../schemas/typed.js'
import { simpleErrorBody, simpleErrorSchema, validationErrorSchema } from './errorBodies.js'
import { bool, closed, described, emptyResponse, htmlResponse, int, nullableInt, nullableStr, num, operatorOnly, str, strings } from './schemaParts.js'

/**
 * The kinds a webhook receiver gets (docs/webhooks.md): the approver's
 * mapping from audit events and the deliveries route's schema both read this
 * list, so a new kind cannot reach one and not the other (approval_withdrawn
 * would otherwise have been listed under a type the OpenAPI document does not
 * name).
 */
export const WEBHOOK_EVENT_TYPES = ['approval_requested', 'approval_vote', 'approval_decided', 'approval_expired', 'approval_withdrawn', 'tx_broadcast', 'broadcast_failed'] as const

/** SPEC "Audit event"; data is the event's own fields. */
export const auditEventSchema = closed({ id: str, timestamp: int, intentId: str, event: str, data: { type: 'object', additionalProperties: true } })

export const riskFactorSchema = closed({ id: str, weight: num, detail: str })
export const balanceDiffSchema = closed({ token: str, change: str })

/** The named operators' votes on a request above requireQuorumAbove. */
export const quorumStateSchema = {
  ...closed({ required: int, approvals: int, approvedBy: strings, remaining: int }),
  description: "The named operators' approvals of a request above requireQuorumAbove: how many it needs, who approved (in vote order), how many more it needs",
}

/** What the approver understood of the intent (the approval service's summary); every string has control and bidi characters escaped. */
const approvalSummarySchema = {
  ...closed({
    intentId: str,
    action: { ...str, description: "the action in words, with the token contracts' own symbol() and decimals() when the chain has an RPC" },
    actionType: str,
    chainId: int,
    chain: str,
    wallet: str,
    recipient: nullableStr,
    spender: nullableStr,
    amount: nullableStr,
    fields: { type: 'array', items: closed({ label: str, value: str, kind: { enum: ['address', 'amount', 'text'] } }) },
    txRequestHash: str,
    to: str,
    value: str,
    skill: { ...nullableStr, description: 'set only for intents from the skill sandbox' },
    clientSource: { ...nullableStr, description: "a client's own metadata.source" },
    note: nullableStr,
    tokenFacts: { enum: ['chain', 'declared'] },
    tokenMismatches: strings,
    unreadTokens: { ...strings, description: 'tokens the gateway could not read from the chain (their lookup failed): shown by address in raw units' },
    riskScore: num,
    riskFactors: { type: 'array', items: riskFactorSchema },
    warnings: strings,
    balanceDiffs: { type: 'array', items: balanceDiffSchema },
    balanceChanges: strings,
    policyReasons: strings,
    preflightSource: { enum: ['gateway preflight', 'no simulation'] },
  }),
}

const approvalCardSchema = {
  ...closed({
    title: str,
    riskScore: num,
    tone: { enum: ['green', 'amber', 'red'] },
    alerts: strings,
    lines: {
      type: 'array',
      items: closed({ label: str, value: str, kind: { enum: ['address', 'amount', 'text', 'hash'] }, tone: { enum: ['red', 'dim'] } }, ['label', 'value', 'kind']),
    },
    lists: { type: 'array', items: closed({ title: str, items: strings, tone: { enum: ['red', 'amber'] } }, ['title', 'items']) },
    confirm: bool,
  }),
  description: 'The approval card as the dashboard and the terminals show it: title, tone (green/amber/red), alerts (red lines), lines, lists, confirm (approving asks twice)',
}

/** SPEC "Approval request (pending list entry)", plus the card and, above requireQuorumAbove, the quorum state. */
export const approvalRequestSchema = closed(
  { requestId: str, summary: approvalSummarySchema, card: approvalCardSchema, ttlSeconds: int, quorum: { ...quorumStateSchema, description: "Only on requests above the policy's requireQuorumAbove" } },
  ['requestId', 'summary', 'card', 'ttlSeconds'],
)

const approverUnavailable = described('approver_unavailable: the gateway could not reach the approver (forwarded routes only)', simpleErrorSchema)

export const pendingRouteSchema = {
  operationId: 'pendingApprovals',
  response: {
    200: described('Pending requests (an empty list when none)', closed({ pending: { type: 'array', items: approvalRequestSchema } })),
    503: approverUnavailable,
  },
}

export const decideParamsSchema = typedSchema<{ requestId: string }>()({
  type: 'object',
  additionalProperties: false,
  required: ['requestId'],
  properties: { requestId: { type: 'string', minLength: 1, maxLength: 64 } },
})

export const decideBodySchema = typedSchema<{ approved: boolean }>()({
  type: 'object',
  additionalProperties: false,
  required: ['approved'],
  properties: { approved: { type: 'boolean' } },
})

export const decideRouteSchema = {
  operationId: 'decide',
  security: operatorOnly,
  params: decideParamsSchema,
  body: decideBodySchema,
  response: {
    200: described(
      'Decided. On a request above requireQuorumAbove, an approval that does not complete the quorum answers decided false with the votes so far (the request stays pending; the same operator approving again counts once, counted false); any denial decides. operator: the named operator (SERVICE_OPERATORS_FILE) who decided.',
      closed({ decided: bool, requestId: str, approved: bool, operator: str, quorum: quorumStateSchema, counted: bool }, ['decided', 'requestId', 'approved']),
    ),
    400: validationErrorSchema,
    401: described('operator_auth_required', simpleErrorSchema),
    403: described("operator_required: a quorum request can only be approved by named operators (the approver's own terminal prompt may only deny it)", simpleErrorSchema),
    404: described('not_found: unknown, expired or already decided', simpleErrorSchema),
    503: described('approver_unavailable, or the decision could not be carried out', simpleErrorSchema),
  },
}

/** SPEC: limit defaults to 20. */
export const HISTORY_DEFAULT_LIMIT = 20
const HISTORY_MIN_LIMIT = 1
const HISTORY_MAX_LIMIT = 100

/**
 * SPEC: `limit` is clamped into 1..100, and these lists answer no errors, so
 * any value gives a limit: a number is clamped (a fraction truncated), what is
 * no number at all (missing, empty, "abc", NaN, given twice) is the default.
 * The gateway's history, the approver's history and its webhook deliveries
 * read it here, so they cannot disagree.
 */
export function clampHistoryLimit(raw: unknown): number {
  if (typeof raw !== 'string' || raw.trim() === '') return HISTORY_DEFAULT_LIMIT
  const n = Number(raw)
  if (Number.isNaN(n)) return HISTORY_DEFAULT_LIMIT
  // Infinity, -Infinity and what overflows to them (1e400) are numbers too, clamped like any other: they were
  // read as no number and got the default of 20 (found by review).
  return Math.min(HISTORY_MAX_LIMIT, Math.max(HISTORY_MIN_LIMIT, Math.trunc(n)))
}

/** Any value is accepted (the history and delivery lists answer no errors); clampHistoryLimit reads what it can. */
export const limitQuerySchema = typedSchema<{ limit?: unknown }>()({
  type: 'object',
  properties: { limit: { description: 'default 20, clamped to 1..100' } },
})

export const historyRouteSchema = {
  operationId: 'history',
  querystring: limitQuerySchema,
  response: { 200: described('Audit events, newest first', closed({ events: { type: 'array', items: auditEventSchema } })) },
}

export const webhookDeliveriesRouteSchema = {
  operationId: 'webhookDeliveries',
  description: 'Delivery status of the signed webhooks (SERVICE_WEBHOOK_URL): event kinds, attempts, errors; never a body or the secret.',
  querystring: limitQuerySchema,
  response: {
    200: described(
      'Webhook deliveries, newest first',
      closed({
        configured: bool,
        deliveries: {
          type: 'array',
          items: closed({
            id: str,
            type: { enum: [...WEBHOOK_EVENT_TYPES] },
            intentId: str,
            status: { enum: ['pending', 'delivered', 'failed'] },
            attempts: int,
            createdAt: int,
            nextAttemptAt: nullableInt,
            lastError: nullableStr,
            deliveredAt: nullableInt,
          }),
        },
      }),
    ),
    503: approverUnavailable,
  },
}

/** The 426 a plain GET of the feed gets, from the approver and from the gateway alike. */
/** A page from another site asked for the feed (403). */
export const originNotAllowedBody = (origin: string | undefined) => simpleErrorBody('origin_not_allowed', `the approval feed is not available to pages from ${origin ?? '(no origin)'}`)

export const feedUpgradeRequiredBody = () =>
  simpleErrorBody('upgrade_required', 'the approval feed is a WebSocket; authenticate with {"type":"auth","token"} as the first message')

export const approvalFeedRouteSchema = {
  operationId: 'approvalFeed',
  description:
    'WebSocket upgrade: the live approval feed. A browser Origin other than this service is refused (403). The first message must be {"type":"auth","token":"<operator token>"} within 5 s, else the socket closes with 4401; nothing is sent before it. Then: {type:"operator",name}, {type:"pending",pending}, {type:"history",events}, and {type:"request",request}, {type:"ended",requestId,end}, {type:"audit",events} as things change.',
  response: {
    101: emptyResponse('Switching protocols'),
    403: described('origin_not_allowed: a page from another site', simpleErrorSchema),
    426: described('upgrade_required: a plain GET, not a WebSocket upgrade', simpleErrorSchema),
  },
}

export const dashboardRouteSchema = {
  operationId: 'dashboard',
  response: { 200: htmlResponse('The operator dashboard'), 503: approverUnavailable },
}
