import http from 'node:http'
import net from 'node:net'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import {
  approvalFeedRouteSchema,
  dashboardRouteSchema,
  decideRouteSchema,
  feedUpgradeRequiredBody,
  originNotAllowedBody,
  pendingRouteSchema,
  webhookDeliveriesRouteSchema,
} from '@countersign/shared/http/approvalsContract'
import { simpleErrorBody } from '@countersign/shared/http/errorBodies'
import type { TypedRoutes } from '@countersign/shared/http/typeProvider'
import { hostNotAllowedBody, hostnameOf } from '@countersign/shared/http/hostGuard'
import { rawJsonResponse } from '@countersign/shared/http/lowLevelErrors'
import { sameOrigin } from '@countersign/shared/http/sameOrigin'
import { markUnproven } from '@countersign/shared/http/connectionLimits'
import { upgradeOnlyWebSockets } from '@countersign/shared/http/upgradeOffers'

const APPROVAL_FEED_PATH = '/v1/approvals/ws'

const approverUnavailableBody = () => simpleErrorBody('approver_unavailable', 'the approver is not reachable')

/** What the approver answered, read whole (up to MAX_APPROVER_ANSWER_BYTES). */
interface ApproverAnswer {
  status: number
  headers: http.IncomingHttpHeaders
  body: Buffer
}

/** The dashboard page, a pending list of 500 cards or a page of deliveries fit well within this. */
const MAX_APPROVER_ANSWER_BYTES = 16 * 1024 * 1024
/**
 * Longer than the approver can take to carry out a decision: its two calls to
 * the signer (mint the token, then its fsync) may each wait 10 s. A shorter
 * wait told the operator "not reachable" about a decision that then went
 * through.
 */
export const APPROVER_TIMEOUT_MS = 30_000

/** The request reached the approver (connected, sent), and then no whole answer came back: what it asked for may have been done. */
class ApproverSilentError extends Error {}

/** One HTTP request to the approver over its Unix socket; rejects on any failure, a cut-off or over-long answer included. */
function askApprover(socketPath: string, req: { method: string; path: string; headers: Record<string, string>; body?: string }, timeoutMs: number): Promise<ApproverAnswer> {
  return new Promise((resolve, reject) => {
    let reached = false
    const fail = (err: Error) => reject(reached ? new ApproverSilentError(err.message) : err)
    const out = http.request({ socketPath, method: req.method, path: req.path, headers: req.headers, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = []
      let size = 0
      res.on('data', (chunk: Buffer) => {
        size += chunk.length
        if (size > MAX_APPROVER_ANSWER_BYTES) res.destroy(new Error('the approver answered more than the gateway forwards'))
        else chunks.push(chunk)
      })
      res.on('end', () => resolve({ status: res.statusCode ?? 502, headers: res.headers, body: Buffer.concat(chunks) }))
      res.on('error', fail)
      res.on('aborted', () => fail(new Error('the approver stopped in the middle of its answer')))
    })
    out.on('socket', (socket) => socket.once('connect', () => (reached = true)))
    out.on('timeout', () => out.destroy(new Error(`the approver did not answer within ${timeoutMs / 1000} s`)))
    out.on('error', fail)
    out.end(req.body)
  })
}

/**
 * Every spec endpoint lives on the gateway's base URL: /approval-ui and the
 * approver's /v1/approvals/* (pending, decide, webhook deliveries, the WebSocket feed) are
 * forwarded to the approver, over its HTTP socket (APPROVER_HTTP_SOCKET) and
 * never its TCP port: what is forwarded carries operator tokens. The routes
 * carry the approver's own route schemas: decide's params and body are
 * checked here too, and the OpenAPI document describes them; the approver's
 * answer is passed on as bytes, which fastify does not serialise again.
 */
export const approverProxyRoutes: TypedRoutes<{ approverSocket: string; timeoutMs?: number }> = async (app, { approverSocket, timeoutMs = APPROVER_TIMEOUT_MS }) => {
  const forward = async (req: FastifyRequest, reply: FastifyReply) => {
    const headers: Record<string, string> = { host: 'localhost' }
    if (req.headers.authorization) headers.authorization = req.headers.authorization
    const body = req.body !== undefined ? JSON.stringify(req.body) : undefined
    if (body !== undefined) headers['content-type'] = 'application/json'
    let res: ApproverAnswer
    try {
      res = await askApprover(approverSocket, { method: req.method, path: req.url, headers, ...(body !== undefined ? { body } : {}) }, timeoutMs)
    } catch (err) {
      if (!(err instanceof ApproverSilentError)) return reply.code(503).send(approverUnavailableBody())
      // A decide the approver received may have been carried out: "not reachable" would say it was not.
      const after = req.method === 'POST' ? ': the decision may or may not have been taken; GET /v1/approvals/pending shows whether the request still waits' : ''
      return reply.code(503).send(simpleErrorBody('approver_unavailable', `the approver received the request but gave no answer (${err.message})${after}`))
    }
    for (const h of ['content-type', 'content-security-policy', 'x-frame-options']) {
      const v = res.headers[h]
      if (typeof v === 'string') reply.header(h, v)
    }
    return reply.code(res.status).send(res.body)
  }
  app.get('/approval-ui', { schema: dashboardRouteSchema }, forward)
  app.get('/v1/approvals/pending', { schema: pendingRouteSchema }, forward)
  app.post('/v1/approvals/:requestId/decide', { schema: decideRouteSchema }, forward)
  app.get('/v1/approvals/webhooks', { schema: webhookDeliveriesRouteSchema }, forward)
  // The feed is a WebSocket (the upgrade is piped by forwardApproverWebSocket); a plain GET gets told so.
  app.get(APPROVAL_FEED_PATH, { schema: approvalFeedRouteSchema }, async (_req, reply) =>
    reply
      .code(426)
      .header('upgrade', 'websocket')
      .send(feedUpgradeRequiredBody()),
  )
}

/**
 * Pipes the dashboard's WebSocket upgrade (an offer of "websocket" to
 * /v1/approvals/ws; nothing else is upgraded) to the approver's HTTP socket (not
 * its TCP port: the feed's first message is the operator token), byte for
 * byte, after the same Host check and an Origin check: a page from another site
 * is refused here (403). The Origin checked here is not passed on, since the
 * approver would compare it with its own address; the operator token is still
 * required by the approver as the first message.
 */
export function forwardApproverWebSocket(app: FastifyInstance, approverSocket: string, bindHost: string): void {
  const allowed = new Set(['localhost', '127.0.0.1', '[::1]', bindHost.toLowerCase()])
  app.server.on('upgrade', (req, socket, head) => {
    // Node hands an upgraded socket over without its own error listener: a
    // client that resets the connection before reading the refusal below would
    // otherwise raise an uncaught ECONNRESET and end the gateway.
    socket.on('error', () => socket.destroy())
    // Refused with the bodies the same request gets without Upgrade (fastify never sees this socket,
    // so the version headers are written here too).
    const host = hostnameOf(req.headers.host)
    if (host === null || !allowed.has(host)) {
      socket.end(rawJsonResponse(403, hostNotAllowedBody(req.headers.host, bindHost)))
      return
    }
    if (!sameOrigin(req.headers.origin, req.headers.host)) {
      socket.end(rawJsonResponse(403, originNotAllowedBody(req.headers.origin)))
      return
    }
    // Until the approver sends the feed anything beyond its 101 (it sends nothing before an operator
    // token is accepted), the gateway's connection limit may close this one to make room: feeds
    // that never sign in must not take the connections API clients need.
    const proven = markUnproven(socket)
    let answerHeadDone = false
    let tail = ''
    const watchForFeed = (chunk: Buffer) => {
      let beyondHead = chunk.length
      if (!answerHeadDone) {
        const text = tail + chunk.toString('latin1')
        const end = text.indexOf('\r\n\r\n')
        if (end === -1) {
          tail = text.slice(-3)
          return
        }
        answerHeadDone = true
        beyondHead = text.length - (end + 4)
      }
      if (beyondHead > 0) {
        proven()
        upstream.off('data', watchForFeed)
      }
    }
    const upstream = net.connect({ path: approverSocket }, () => {
      const lines = [`GET ${req.url} HTTP/1.1`]
      for (let i = 0; i < req.rawHeaders.length; i += 2) {
        const name = req.rawHeaders[i]!
        if (name.toLowerCase() === 'origin') continue
        lines.push(`${name}: ${name.toLowerCase() === 'host' ? 'localhost' : req.rawHeaders[i + 1]}`)
      }
      upstream.write(lines.join('\r\n') + '\r\n\r\n')
      if (head.length) upstream.write(head)
      socket.pipe(upstream).pipe(socket)
      upstream.on('data', watchForFeed)
    })
    const close = () => {
      socket.destroy()
      upstream.destroy()
    }
    upstream.on('error', () => socket.end(rawJsonResponse(503, approverUnavailableBody())))
    socket.on('error', close)
    upstream.on('close', () => socket.destroy())
    socket.on('close', () => {
      proven()
      upstream.destroy()
    })
  })
  // Only a WebSocket offer to the feed reaches the listener above; any other request with Upgrade
  // (curl --http2 sends "Upgrade: h2c" on every request) is served as plain HTTP/1.1.
  upgradeOnlyWebSockets(app.server, [APPROVAL_FEED_PATH])
}
