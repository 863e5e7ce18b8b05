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
import { routeNotFoundBody } from '@countersign/shared/http/errors'
import type { TypedRoutes } from '@countersign/shared/http/typeProvider'
import { hostNotAllowedBody, hostnameOf } from '@countersign/shared/http/hostGuard'
import { rawJsonResponse } from '@countersign/shared/http/lowLevelErrors'
import { sameOrigin } from '@countersign/shared/http/sameOrigin'

const approverUnavailableBody = () => simpleErrorBody('approver_unavailable', 'the approver is not reachable')

/**
 * Every spec endpoint lives on the gateway's base URL: /approval-ui and the
 * approver's /v1/approvals/* (pending, decide, webhook deliveries, the WebSocket feed) are
 * forwarded to the approver, which also listens on its own port. The routes
 * carry the approver's own route schemas: decide's params and body are
 * checked here too, and the OpenAPI document describes them; the approver's
 * answer is passed on as bytes, which fastify does not serialise again.
 */
export const approverProxyRoutes: TypedRoutes<{ approverUrl: string }> = async (app, { approverUrl }) => {
  const forward = async (req: FastifyRequest, reply: FastifyReply) => {
    const headers: Record<string, string> = { host: new URL(approverUrl).host }
    if (req.headers.authorization) headers.authorization = req.headers.authorization
    if (req.body !== undefined) headers['content-type'] = 'application/json'
    let res: Response
    let body: Buffer
    try {
      res = await fetch(approverUrl + req.url, {
        method: req.method,
        headers,
        ...(req.body !== undefined ? { body: JSON.stringify(req.body) } : {}),
        signal: AbortSignal.timeout(10_000),
      })
      // Read here too: an approver that goes away (or times out) in the middle of its answer is unreachable as well.
      body = Buffer.from(await res.arrayBuffer())
    } catch {
      return reply.code(503).send(approverUnavailableBody())
    }
    for (const h of ['content-type', 'content-security-policy', 'x-frame-options']) {
      const v = res.headers.get(h)
      if (v) reply.header(h, v)
    }
    return reply.code(res.status).send(body)
  }
  app.get('/approval-ui', { schema: dashboardRouteSchema }, forward)
  app.get('/v1/approvals/pending', { schema: pendingRouteSchema }, forward)
  app.post('/v1/approvals/:requestId/decide', { schema: decideRouteSchema }, forward)
  app.get('/v1/approvals/webhooks', { schema: webhookDeliveriesRouteSchema }, forward)
  // The feed is a WebSocket (the upgrade is piped by forwardApproverWebSocket); a plain GET gets told so.
  app.get('/v1/approvals/ws', { schema: approvalFeedRouteSchema }, async (_req, reply) =>
    reply
      .code(426)
      .header('upgrade', 'websocket')
      .send(feedUpgradeRequiredBody()),
  )
}

/**
 * Pipes the dashboard's WebSocket upgrade to the approver, byte for byte,
 * after the same Host check and an Origin check: a page from another site
 * is refused here (403). The Origin checked here is not passed on, since the
 * approver would compare it with its own address; the operator token is still
 * required by the approver as the first message.
 */
export function forwardApproverWebSocket(app: FastifyInstance, approverUrl: string, bindHost: string): void {
  const target = new URL(approverUrl)
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
    if (req.url !== '/v1/approvals/ws') {
      socket.end(rawJsonResponse(404, routeNotFoundBody(req.method, req.url)))
      return
    }
    if (!sameOrigin(req.headers.origin, req.headers.host)) {
      socket.end(rawJsonResponse(403, originNotAllowedBody(req.headers.origin)))
      return
    }
    const upstream = net.connect(Number(target.port), target.hostname, () => {
      const lines = [`GET ${req.url} HTTP/1.1`]
      for (let i = 0; i < req.rawHeaders.length; i += 2) {
        const name = req.rawHeaders[i]!
        if (name.toLowerCase() === 'origin') continue
        lines.push(`${name}: ${name.toLowerCase() === 'host' ? target.host : req.rawHeaders[i + 1]}`)
      }
      upstream.write(lines.join('\r\n') + '\r\n\r\n')
      if (head.length) upstream.write(head)
      socket.pipe(upstream).pipe(socket)
    })
    const close = () => {
      socket.destroy()
      upstream.destroy()
    }
    upstream.on('error', () => socket.end(rawJsonResponse(503, approverUnavailableBody())))
    socket.on('error', close)
    upstream.on('close', () => socket.destroy())
    socket.on('close', () => upstream.destroy())
  })
}
