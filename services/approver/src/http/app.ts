import { readFileSync } from 'node:fs'
import type { Socket } from 'node:net'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import websocket from '@fastify/websocket'
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify'
import { canonicalUuid, createAjv, type AuditLog, type Clock } from '@countersign/shared'
import { approvalFeedRouteSchema, clampHistoryLimit, decideRouteSchema, feedUpgradeRequiredBody, historyRouteSchema, originNotAllowedBody, pendingRouteSchema, webhookDeliveriesRouteSchema, dashboardRouteSchema } from '@countersign/shared/http/approvalsContract'
import { simpleErrorBody } from '@countersign/shared/http/errorBodies'
import type { SchemaTypeProvider } from '@countersign/shared/http/typeProvider'
import { HttpError, installErrorHandling } from '@countersign/shared/http/errors'
import { installStrictJson } from '@countersign/shared/http/strictJson'
import { installHostGuard } from '@countersign/shared/http/hostGuard'
import { answerExpectation, answerHandshakeError, lowLevelErrorOptions } from '@countersign/shared/http/lowLevelErrors'
import { responseHeaderLines } from '@countersign/shared/http/responseHeaders'
import { applyConnectionLimits, DEFAULT_CONNECTION_LIMITS, markUnproven, type ConnectionLimits } from '@countersign/shared/http/connectionLimits'
import { answerConnect, upgradeOnlyWebSockets } from '@countersign/shared/http/upgradeOffers'
import { DecisionError, type ApprovalService } from '../approvalService.js'
import { createFailedSignIns, recordingRefusals, type FailedSignIns } from '../operators/failedSignIns.js'
import { singleTokenOperators, type Operators } from '../operators/operators.js'
import { dashboardPolicy } from './dashboardPolicy.js'
import { requireOperator } from './requireOperator.js'
import { pendingView } from '../channels/pendingView.js'
import type { WebChannel } from '../channels/webChannel.js'
import type { WebhookOutbox } from '../webhooks/outbox.js'
import { sameOrigin } from '@countersign/shared/http/sameOrigin'

const here = path.dirname(fileURLToPath(import.meta.url))
const DASHBOARD = path.resolve(here, '../../public/approval-ui.html')

export interface ApproverHttpDeps {
  host: string
  service: ApprovalService
  /** The dashboard's live feed; its sockets are added once they authenticate. */
  web: WebChannel
  audit: AuditLog
  clock: Clock
  /** null when SERVICE_OPERATOR_AUTH=off */
  operatorToken: string | null
  /** Named operators (SERVICE_OPERATORS_FILE); when given, they decide instead of operatorToken. */
  operators?: Operators | null
  /** Where refused operator tokens are recorded; without it the app records them in its own (closed with the app). */
  failedSignIns?: FailedSignIns
  /** The webhook outbox; null when SERVICE_WEBHOOK_URL is not set. */
  webhooks?: WebhookOutbox | null
  logger?: FastifyServerOptions['logger']
  /** How often the WebSocket feed looks for new audit rows from the other processes. */
  auditPollMs?: number
  /** How long a new WebSocket may take to send its auth message (5 s). */
  wsAuthTimeoutMs?: number
  /** Time to send a request, connections at once (default DEFAULT_CONNECTION_LIMITS); the socket listener takes the same. */
  connectionLimits?: ConnectionLimits
}

export { pendingView }

/** At most this many audit events go out in one feed message; more wait for the next poll. */
const FEED_PAGE = 500

/** WebSocket close code: no valid operator token in time. */
export const WS_UNAUTHORISED = 4401
/** How long a refused feed's client has to answer the closing handshake before its connection is cut. */
const REFUSED_FEED_CLOSE_MS = 1000
/** RFC 6455 1011: the server met a condition that kept it from serving the feed. */
export const WS_INTERNAL_ERROR = 1011

export async function buildApproverApp(deps: ApproverHttpDeps): Promise<FastifyInstance> {
  const { service, audit, clock } = deps
  // null: SERVICE_OPERATOR_AUTH=off, anyone may decide.
  const operators: Operators | null = deps.operators ?? (deps.operatorToken !== null ? singleTokenOperators(deps.operatorToken) : null)
  const failedSignIns = deps.failedSignIns ?? createFailedSignIns({ audit, clock })
  const ownsFailedSignIns = deps.failedSignIns === undefined
  const app = Fastify({ logger: deps.logger ?? false, bodyLimit: 16 * 1024, onProtoPoisoning: 'error', requestIdHeader: false, ...lowLevelErrorOptions }).withTypeProvider<SchemaTypeProvider>()
  applyConnectionLimits(app.server, deps.connectionLimits ?? DEFAULT_CONNECTION_LIMITS, (message) => app.log.warn(message))
  const ajv = createAjv()
  app.setValidatorCompiler(({ schema }) => ajv.compile(schema))
  installErrorHandling(app)
  installStrictJson(app)
  installHostGuard(app, deps.host)
  await app.register(websocket, { options: { maxPayload: 4096 } })
  // A handshake ws refuses is answered in the spec's 400 shape, not ws's own text/html page.
  app.websocketServer.on('wsClientError', (err: Error, socket: Socket) => answerHandshakeError(err, socket))
  // ws writes the 101 itself, past fastify's hooks: the version and nosniff headers go in here (found by
  // review: the feed's handshake was the one answer without them, through the gateway too, which pipes it).
  app.websocketServer.on('headers', (headers: string[]) => headers.push(...responseHeaderLines))
  // Only a WebSocket offer to the feed is upgraded; any other request with Upgrade (curl --http2's
  // "Upgrade: h2c") is served as plain HTTP/1.1, where the plugin would answer it as a failed handshake.
  upgradeOnlyWebSockets(app.server, ['/v1/approvals/ws'])
  app.server.on('connect', answerConnect('GET, HEAD, POST'))
  app.server.on('checkExpectation', answerExpectation)
  app.decorateRequest('operator', null)

  const pendingList = () => ({ pending: service.pending.list().map((p) => pendingView(p, clock())) })

  app.get('/v1/approvals/pending', { schema: pendingRouteSchema }, async () => pendingList())

  app.post(
    '/v1/approvals/:requestId/decide',
    { schema: decideRouteSchema, preHandler: requireOperator(operators && recordingRefusals(operators, failedSignIns, 'decide'), 'deciding') },
    async (req) => {
      // Request ids are UUIDs, minted in lower case; one written in upper case (Swift's uuidString) is the same
      // request: it was 404 not_found (found by fuzzing), as intent ids and tokens were at the gateway before.
      const requestId = canonicalUuid(req.params.requestId)
      const { approved } = req.body
      try {
        return await service.decide(requestId, approved, 'web', req.operator?.name ?? undefined)
      } catch (err) {
        if (err instanceof DecisionError) {
          const status = err.code === 'not_found' ? 404 : err.code === 'operator_required' ? 403 : 503
          throw new HttpError(status, simpleErrorBody(err.code, err.message))
        }
        throw err
      }
    },
  )

  app.get('/v1/approvals/history', { schema: historyRouteSchema }, async (req) => ({
    events: audit.list({ limit: clampHistoryLimit(req.query.limit), malformed: 'show' }),
  }))

  // Delivery status for the dashboard: event kinds, attempts, errors; never a body or the secret.
  app.get('/v1/approvals/webhooks', { schema: webhookDeliveriesRouteSchema }, async (req) => ({
    configured: Boolean(deps.webhooks),
    deliveries: deps.webhooks ? deps.webhooks.list(clampHistoryLimit(req.query.limit)) : [],
  }))

  const dashboard = readFileSync(DASHBOARD, 'utf8')
  const policy = dashboardPolicy(dashboard)
  app.get('/approval-ui', { schema: dashboardRouteSchema }, async (_req, reply) =>
    reply
      .type('text/html; charset=utf-8')
      .header('content-security-policy', policy)
      .header('x-frame-options', 'DENY')
      .send(dashboard),
  )

  // Live feed, after the operator token: the pending list, then each new and
  // ended request (the web channel) and new audit events (written by all
  // three processes) as soon as they are committed.
  const { web } = deps
  // Rows another process inserted by hand are shown (toShownEvent), not thrown:
  // nothing written into audit.db may stop this feed, or the approver with it.
  const newest = (limit: number) => audit.list({ limit, malformed: 'show' })
  // The feed follows the log by seq: however many rows arrive between two polls, none is skipped
  // (a burst beyond one page goes out over the next polls).
  let lastSeq = audit.head().seq
  let readFailure: string | null = null
  const poll = setInterval(() => {
    try {
      if (web.subscribers === 0) {
        lastSeq = audit.head().seq
        readFailure = null
        return
      }
      const rows = audit.listAfter(lastSeq, FEED_PAGE)
      readFailure = null
      if (rows.length === 0) return
      lastSeq = rows.at(-1)!.seq
      // Newest first, as history.
      web.broadcast({ type: 'audit', events: rows.map((r) => r.event).reverse() })
    } catch (err) {
      // A read that fails (the disk, a damaged file) is logged once until one works again; the feed retries.
      const text = (err as Error).message
      if (text !== readFailure) app.log.error({ err }, 'the dashboard feed could not read audit.db; retrying')
      readFailure = text
    }
  }, deps.auditPollMs ?? 250)
  poll.unref()
  app.addHook('onClose', async () => {
    clearInterval(poll)
    if (ownsFailedSignIns) await failedSignIns.close()
  })

  // A WebSocket is not bound by CORS: a page on any site could open it. So a
  // browser Origin other than this service's own is refused before the
  // upgrade, and nothing is sent until the first message carries the operator token.
  const refuseForeignOrigin = async (req: FastifyRequest, reply: FastifyReply) => {
    if (!sameOrigin(req.headers.origin, req.headers.host)) {
      return reply.code(403).send(originNotAllowedBody(req.headers.origin))
    }
  }
  const authTimeoutMs = deps.wsAuthTimeoutMs ?? 5000
  app.route({
    method: 'GET',
    url: '/v1/approvals/ws',
    schema: approvalFeedRouteSchema,
    preValidation: refuseForeignOrigin,
    // A plain GET, not an upgrade: told so in the spec's error shape.
    handler: async (_req, reply) => reply.code(426).header('upgrade', 'websocket').send(feedUpgradeRequiredBody()),
    wsHandler: (socket, req) => {
      let unsubscribe: (() => void) | null = null
      // False when the snapshot could not be read (audit.db damaged or unreadable): the feed is closed
      // with 1011 and the error logged. Thrown from a socket listener it would end the approver.
      const start = (): boolean => {
        let snapshot: { pending: string; history: string }
        try {
          snapshot = { pending: JSON.stringify({ type: 'pending', ...pendingList() }), history: JSON.stringify({ type: 'history', events: newest(20) }) }
        } catch (err) {
          app.log.error({ err }, 'the dashboard feed could not read its snapshot; feed closed')
          socket.close(WS_INTERNAL_ERROR, 'the approver could not read the audit log; see its log')
          return false
        }
        unsubscribe = web.subscribe(socket)
        socket.send(snapshot.pending)
        socket.send(snapshot.history)
        return true
      }
      // Until its operator token is accepted, the connection limit may close this feed to make room
      // for a newcomer: a feed nobody signs in to must not hold a connection the API needs.
      const proven = operators === null ? () => undefined : markUnproven(req.raw.socket)
      let dropTimer: NodeJS.Timeout | undefined
      // A client that never answers the closing handshake would hold the connection for the 30 s
      // the WebSocket library waits for it; a refused feed gets a second.
      const refuse = (reason: string) => {
        socket.close(WS_UNAUTHORISED, reason)
        dropTimer = setTimeout(() => socket.terminate(), REFUSED_FEED_CLOSE_MS)
      }
      socket.on('close', () => {
        clearTimeout(timer)
        clearTimeout(dropTimer)
        proven()
        unsubscribe?.()
      })
      const timer = setTimeout(() => refuse('operator token required'), authTimeoutMs)
      if (operators === null) {
        clearTimeout(timer)
        start()
        return
      }
      const known = recordingRefusals(operators, failedSignIns, 'dashboard')
      socket.once('message', (data: Buffer) => {
        clearTimeout(timer)
        let msg: unknown
        try {
          msg = JSON.parse(data.toString('utf8'))
        } catch {
          msg = null
        }
        const m = msg as { type?: unknown; token?: unknown } | null
        const who = m?.type === 'auth' ? known.identify(m.token) : null
        if (who === null) {
          refuse('operator token refused')
          return
        }
        proven()
        if (!start()) return
        // Who this feed belongs to (null: the single operator token), so the views can say "signed in as …".
        socket.send(JSON.stringify({ type: 'operator', name: who.name }))
        // The feed is one-way after auth; anything else a client sends is ignored.
        socket.on('message', () => {})
      })
    },
  })

  return app
}
