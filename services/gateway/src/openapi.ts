import { STATUS_CODES } from 'node:http'
import { isDeepStrictEqual } from 'node:util'
import { SERVICE_VERSION, createAjv, policyFileSchema, skillManifestSchema, txRequestSchema } from '@countersign/shared'
import {
  approvalFeedRouteSchema,
  approvalRequestSchema,
  auditEventSchema,
  balanceDiffSchema,
  dashboardRouteSchema,
  decideRouteSchema,
  historyRouteSchema,
  pendingRouteSchema,
  quorumStateSchema,
  riskFactorSchema,
  webhookDeliveriesRouteSchema,
} from '@countersign/shared/http/approvalsContract'
import { httpErrorSchema, policyDeniedSchema, simpleErrorSchema, validationErrorSchema } from '@countersign/shared/http/errorBodies'
import { hostNotAllowedBody } from '@countersign/shared/http/hostGuard'
import type { SecurityRequirements } from '@countersign/shared/http/schemaParts'
import { approveRequestRouteSchema } from './routes/approveRequest.js'
import { buildRouteSchema } from './routes/build.js'
import { balanceRouteSchema, receiptRouteSchema } from './routes/chainReads.js'
import { intentTxRouteSchema } from './routes/intentTx.js'
import { txIntentInputSchema } from './routes/intentInput.js'
import { policyDecisionSchema } from './routes/contractParts.js'
import { healthRouteSchema } from './routes/health.js'
import { preflightRouteSchema } from './routes/preflight.js'
import { signAndSendRouteSchema } from './routes/signAndSend.js'
import { getSkillRouteSchema, listSkillsRouteSchema, registerSkillRouteSchema, revokeSkillRouteSchema, runSkillRouteSchema } from './routes/skills.js'

// The OpenAPI 3.1 description of the API, generated from the route schemas
// themselves: the request schemas fastify validates with and the response
// schemas it serialises with (the very objects the routes are registered
// with; openapi.test.ts checks that against the running app). Served at
// GET /v1/openapi.json and checked in as docs/openapi.json.

/** A fastify route schema with the OpenAPI annotations fastify ignores (fastify-swagger's convention). */
export interface RouteSchema {
  operationId: string
  description?: string
  security?: SecurityRequirements
  params?: object
  querystring?: object
  body?: object
  response: Record<number, object>
}

export const openApiRouteSchema = {
  operationId: 'openapi',
  response: { 200: { description: 'This document', type: 'object', additionalProperties: true } },
} satisfies RouteSchema

type Method = 'get' | 'post' | 'delete'

/** Every route the gateway serves, with the schema it is registered with. */
export const documentedRoutes: ReadonlyArray<{ method: Method; path: string; schema: RouteSchema }> = [
  { method: 'get', path: '/v1/health', schema: healthRouteSchema },
  { method: 'get', path: '/v1/openapi.json', schema: openApiRouteSchema },
  { method: 'post', path: '/v1/tx/build', schema: buildRouteSchema },
  { method: 'post', path: '/v1/tx/preflight', schema: preflightRouteSchema },
  { method: 'post', path: '/v1/tx/approve-request', schema: approveRequestRouteSchema },
  { method: 'post', path: '/v1/tx/sign-and-send', schema: signAndSendRouteSchema },
  { method: 'get', path: '/v1/tx/{hash}', schema: receiptRouteSchema },
  { method: 'get', path: '/v1/intents/{intentId}/tx', schema: intentTxRouteSchema },
  { method: 'get', path: '/v1/balance/{token}/{account}', schema: balanceRouteSchema },
  { method: 'get', path: '/v1/approvals/pending', schema: pendingRouteSchema },
  { method: 'post', path: '/v1/approvals/{requestId}/decide', schema: decideRouteSchema },
  { method: 'get', path: '/v1/approvals/history', schema: historyRouteSchema },
  { method: 'get', path: '/v1/approvals/webhooks', schema: webhookDeliveriesRouteSchema },
  { method: 'get', path: '/v1/approvals/ws', schema: approvalFeedRouteSchema },
  { method: 'get', path: '/approval-ui', schema: dashboardRouteSchema },
  { method: 'post', path: '/v1/skills/register', schema: registerSkillRouteSchema },
  { method: 'get', path: '/v1/skills', schema: listSkillsRouteSchema },
  { method: 'get', path: '/v1/skills/{name}', schema: getSkillRouteSchema },
  { method: 'delete', path: '/v1/skills/{name}', schema: revokeSkillRouteSchema },
  { method: 'post', path: '/v1/skills/{name}/run', schema: runSkillRouteSchema },
]

/** Named schemas: wherever one appears in a route schema, the document refers to it. */
const components: Record<string, object> = {
  // As the routes take it: the id in either case (the signer's own schema takes lower case only).
  TxIntent: txIntentInputSchema,
  SkillManifest: skillManifestSchema,
  ValidationError: validationErrorSchema,
  SimpleError: simpleErrorSchema,
  HttpError: httpErrorSchema,
  PolicyFile: {
    ...policyFileSchema,
    description:
      "The policy file (SERVICE_POLICY_FILE), read by the gateway and the signer. recipientAllowlist, when non-empty, covers transfer recipients and approve spenders (a spender in contractAllowlist also passes), and makes a swap whose assetOut is not in tokenAllowlist require approval (it pays whoever sells that token). An approve amount counts against tokenLimits maxAmount and requireApprovalAbove like a transfer; an approve of 2^96 - 1 (uint96's maximum, which some tokens treat as infinite) or more is unlimited and follows unlimitedApprovals (default require_approval). requireQuorumAbove {valueWei, tokens: {address: amount}, approvals: M (2-100)}: a native value or token amount (an approve's allowance included) above its figure always needs approval, by M distinct named operators (SERVICE_OPERATORS_FILE; the approver refuses to start without enough of them).",
  },
  PolicyError: policyDeniedSchema,
  PolicyDecision: policyDecisionSchema,
  TxRequest: txRequestSchema,
  RiskFactor: riskFactorSchema,
  BalanceDiff: balanceDiffSchema,
  AuditEvent: auditEventSchema,
  ApprovalRequest: approvalRequestSchema,
  QuorumState: quorumStateSchema,
}

const withoutDescription = (schema: object): object => {
  const { description: _description, ...rest } = schema as { description?: unknown }
  return rest
}

/** The schema as the document shows it: every named schema inside replaced by a $ref (keeping a description of its own). */
function documented(schema: unknown, self?: string): unknown {
  if (Array.isArray(schema)) return schema.map((s) => documented(s))
  if (typeof schema !== 'object' || schema === null) return schema
  const bare = withoutDescription(schema)
  for (const [name, component] of Object.entries(components)) {
    if (name === self || !isDeepStrictEqual(bare, withoutDescription(component))) continue
    const description = (schema as { description?: unknown }).description
    const own = description !== undefined && description !== (component as { description?: unknown }).description
    return { $ref: `#/components/schemas/${name}`, ...(own ? { description } : {}) }
  }
  return Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, documented(v)]))
}

interface ObjectSchema {
  required?: readonly string[]
  properties?: Record<string, { description?: string }>
}

function parameters(where: 'path' | 'query', schema: object | undefined) {
  const { properties = {}, required = [] } = (schema ?? {}) as ObjectSchema
  return Object.entries(properties).map(([name, property]) => ({
    name,
    in: where,
    required: where === 'path' || required.includes(name),
    ...(property.description ? { description: property.description } : {}),
    schema: documented(withoutDescription(property)),
  }))
}

function responses(response: Record<number, object>) {
  return Object.fromEntries(
    Object.entries(response).map(([status, entry]) => {
      const { description = STATUS_CODES[Number(status)] ?? status, content, ...schema } = entry as { description?: string; content?: Record<string, { schema: unknown }> }
      if (content) return [status, { description, content: Object.fromEntries(Object.entries(content).map(([type, c]) => [type, { schema: documented(c.schema) }])) }]
      if (Object.keys(schema).length === 0) return [status, { description }]
      return [status, { description, content: { 'application/json': { schema: documented(schema) } } }]
    }),
  )
}

/**
 * The answers the HTTP layer gives before the route runs (lowLevelErrors.ts,
 * errors.ts), so that a client reading the document knows every status it
 * can get: a path segment longer than the router accepts, a body over the
 * body limit or of a media type other than application/json.
 */
function beforeTheRoute(schema: RouteSchema): Record<number, object> {
  const answers: Record<number, object> = {}
  const answer = (description: string): object => ({ ...httpErrorSchema, description })
  if (schema.params) answers[414] = answer('A path segment is longer than the server accepts (before the route runs)')
  if (schema.body) {
    answers[413] = answer('The body is larger than the server accepts (before the route runs)')
    answers[415] = answer('The body is not application/json, or is compressed (a Content-Encoding other than identity) (before the route runs)')
  }
  return answers
}

/**
 * The Host guard (hostGuard.ts) answers every route, before anything else
 * runs, with 403 host_not_allowed in the simple error shape: undocumented, a
 * client reading the document did not know to expect it (found by review).
 * A route with a 403 of its own documents both bodies under the one status.
 */
const HOST_NOT_ALLOWED = 'host_not_allowed: the Host header is not localhost, a loopback address or the bind address (DNS-rebinding guard, before the route runs)'

function withHostRefusal(response: Record<number, object>): Record<number, object> {
  const own = response[403] as { description?: string } | undefined
  if (!own) return { ...response, 403: { ...simpleErrorSchema, description: HOST_NOT_ALLOWED } }
  const description = `${own.description ?? STATUS_CODES[403]}; or ${HOST_NOT_ALLOWED}`
  const schema = withoutDescription(own)
  // A 403 schema that already admits {error, message} (sign-and-send's, the simple error itself) only gains the sentence.
  if (createAjv().compile(schema)(hostNotAllowedBody('evil.example', '127.0.0.1'))) return { ...response, 403: { ...schema, description } }
  const branches = 'anyOf' in schema && Object.keys(schema).length === 1 ? (schema.anyOf as object[]) : [schema]
  return { ...response, 403: { description, anyOf: [...branches, simpleErrorSchema] } }
}

/** One route's OpenAPI operation, from its route schema. */
export function operationOf(schema: RouteSchema) {
  const params = [...parameters('path', schema.params), ...parameters('query', schema.querystring)]
  return {
    operationId: schema.operationId,
    ...(schema.description ? { description: schema.description } : {}),
    ...(schema.security ? { security: schema.security } : {}),
    ...(params.length ? { parameters: params } : {}),
    ...(schema.body ? { requestBody: { required: true, content: { 'application/json': { schema: documented(schema.body) } } } } : {}),
    responses: responses(withHostRefusal({ ...beforeTheRoute(schema), ...schema.response })),
  }
}

export function buildOpenApiDocument() {
  const paths: Record<string, Record<string, ReturnType<typeof operationOf>>> = {}
  for (const route of documentedRoutes) (paths[route.path] ??= {})[route.method] = operationOf(route.schema)
  return {
    openapi: '3.1.0',
    info: {
      title: 'countersign',
      version: SERVICE_VERSION,
      description:
        'A signing service for AI agents: declarative intents in; policy, simulation, human approval and an isolated signer before anything is signed. Every response carries X-Service-Version and X-Content-Type-Options: nosniff. Every route answers 403 host_not_allowed ({error, message}) to a request whose Host header is not localhost, a loopback address or the address the service is bound to (a guard against DNS rebinding), before anything else runs.',
    },
    servers: [{ url: 'http://127.0.0.1:3100' }],
    components: {
      schemas: Object.fromEntries(Object.entries(components).map(([name, schema]) => [name, documented(schema, name)])),
      securitySchemes: { operatorToken: { type: 'http', scheme: 'bearer', description: 'DATA_DIR/operator-token, or SERVICE_OPERATOR_TOKEN' } },
    },
    paths,
  }
}
