import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import websocket from '@fastify/websocket'
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import { createAjv, type AuditEvent, type AuditLog, type Clock } from '@countersign/shared'
import { HttpError, installErrorHandling } from '@countersign/shared/http/errors'
import { installHostGuard } from '@countersign/shared/http/hostGuard'
import { lowLevelErrorOptions } from '@countersign/shared/http/lowLevelErrors'
import { DecisionError, type ApprovalService } from '../approvalService.js'
import { bearerMatches } from '../operatorToken.js'
import type { PendingRequest } from '../pendingRequests.js'

const here = path.dirname(fileURLToPath(import.meta.url))
const DASHBOARD = path.resolve(here, '../../public/approval-ui.html')

export interface ApproverHttpDeps {
  host: string
  service: ApprovalService
  audit: AuditLog
  clock: Clock
  /** null when SERVICE_OPERATOR_AUTH=off */
  operatorToken: string | null
  logger?: FastifyServerOptions['logger']
  /** How often the WebSocket feed looks for new audit rows from the other processes. */
  auditPollMs?: number
}

/** SPEC "Approval request": requestId, summary {action, riskScore, warnings, …}, ttlSeconds. */
export function pendingView(p: PendingRequest, nowMs: number) {
  return { requestId: p.requestId, summary: p.summary, ttlSeconds: Math.max(0, Math.ceil((p.expiresAt - nowMs) / 1000)) }
}

export function clampHistoryLimit(raw: unknown): number {
  if (typeof raw !== 'string' || raw.trim() === '') return 20
  const n = Number(raw)
  return Number.isFinite(n) ? Math.min(100, Math.max(1, Math.trunc(n))) : 20
}

const decideBodySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['approved'],
  properties: { approved: { type: 'boolean' } },
} as const

const decideParamsSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['requestId'],
  properties: { requestId: { type: 'string', minLength: 1, maxLength: 64 } },
} as const

export async function buildApproverApp(deps: ApproverHttpDeps): Promise<FastifyInstance> {
  const { service, audit, clock } = deps
  const app = Fastify({ logger: deps.logger ?? false, bodyLimit: 16 * 1024, onProtoPoisoning: 'error', requestIdHeader: false, ...lowLevelErrorOptions })
  const ajv = createAjv()
  app.setValidatorCompiler(({ schema }) => ajv.compile(schema))
  installErrorHandling(app)
  installHostGuard(app, deps.host)
  await app.register(websocket, { options: { maxPayload: 4096 } })

  const pendingList = () => ({ pending: service.pending.list().map((p) => pendingView(p, clock())) })

  app.get('/v1/approvals/pending', async () => pendingList())

  app.post(
    '/v1/approvals/:requestId/decide',
    { schema: { params: decideParamsSchema, body: decideBodySchema } },
    async (req) => {
      if (deps.operatorToken !== null && !bearerMatches(req.headers.authorization, deps.operatorToken)) {
        throw new HttpError(401, {
          error: 'operator_auth_required',
          message: 'deciding needs the operator token: Authorization: Bearer <token> (DATA_DIR/operator-token)',
        })
      }
      const { requestId } = req.params as { requestId: string }
      const { approved } = req.body as { approved: boolean }
      try {
        return await service.decide(requestId, approved, 'web')
      } catch (err) {
        if (err instanceof DecisionError) {
          throw new HttpError(err.code === 'not_found' ? 404 : 503, { error: err.code, message: err.message })
        }
        throw err
      }
    },
  )

  app.get('/v1/approvals/history', async (req) => ({
    events: audit.list({ limit: clampHistoryLimit((req.query as Record<string, unknown>).limit) }),
  }))

  const dashboard = readFileSync(DASHBOARD, 'utf8')
  app.get('/approval-ui', async (_req, reply) =>
    reply
      .type('text/html; charset=utf-8')
      .header('content-security-policy', "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'")
      .header('x-frame-options', 'DENY')
      .send(dashboard),
  )

  // Live feed: the pending list whenever it changes, and new audit events
  // (written by all three processes) as soon as they are committed.
  const sockets = new Set<{ send(data: string): void; readyState: number }>()
  const broadcast = (msg: unknown) => {
    const text = JSON.stringify(msg)
    for (const s of sockets) if (s.readyState === 1) s.send(text)
  }
  const offChange = service.pending.onChange(() => broadcast({ type: 'pending', ...pendingList() }))
  let lastSeen: string | undefined = audit.list({ limit: 1 })[0]?.id
  const poll = setInterval(() => {
    if (sockets.size === 0) {
      lastSeen = audit.list({ limit: 1 })[0]?.id
      return
    }
    const fresh: AuditEvent[] = []
    for (const e of audit.list({ limit: 100 })) {
      if (e.id === lastSeen) break
      fresh.push(e)
    }
    if (fresh.length === 0) return
    lastSeen = fresh[0]!.id
    broadcast({ type: 'audit', events: fresh })
  }, deps.auditPollMs ?? 250)
  poll.unref()
  app.addHook('onClose', async () => {
    clearInterval(poll)
    offChange()
  })

  app.get('/v1/approvals/ws', { websocket: true }, (socket) => {
    sockets.add(socket)
    socket.send(JSON.stringify({ type: 'pending', ...pendingList() }))
    socket.send(JSON.stringify({ type: 'history', events: audit.list({ limit: 20 }) }))
    socket.on('close', () => sockets.delete(socket))
    // The feed is one-way; anything a client sends is ignored.
    socket.on('message', () => {})
  })

  return app
}
