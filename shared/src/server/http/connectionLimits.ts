// How long a client may take to send a request, and how many connections a
// server holds at once. fastify turns Node's 5-minute request timeout off
// (requestTimeout: 0), so a client that sent the headers and all but one
// byte of a 64 KB body held its ~70 KB forever; 1,500 of them held the
// gateway at +110 MB with none ever closed (found by review).
import type { Server } from 'node:http'
import { Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import { simpleErrorBody } from './errorBodies.js'
import { rawJsonResponse } from './lowLevelErrors.js'

export interface ConnectionLimits {
  /** From a connection's first byte (or the start of its next request) to the end of the headers. */
  headersTimeoutMs: number
  /**
   * From the start of a request to its last body byte. Node stops this
   * clock once the request has arrived, so a route that then takes long to
   * answer (approve-request waits up to 300 s for an operator) is not cut,
   * nor is a WebSocket once upgraded.
   */
  requestTimeoutMs: number
  /** Connections held at once; one more is answered 503 too_many_connections and closed. */
  maxConnections: number
}

/**
 * 10 s for headers that honest clients send in one packet; 30 s for the
 * largest body the gateway accepts (64 KB) even at 4 KB/s. 1024
 * connections: twice the approver's 500 pending requests, each of which
 * holds one approve-request connection while it waits, and at most ~70 MB
 * if every one of them is a slow body.
 */
export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = { headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, maxConnections: 1024 }

/**
 * How often Node looks for requests past their time (its default, 30 s,
 * would let a slow body live up to a minute under a 30 s bound).
 */
const CHECK_INTERVAL_MS = 1000
const REFUSAL_WARNING_INTERVAL_MS = 60_000

const applied = new WeakMap<Server, ConnectionLimits>()

/** The limits a server was given (another server of the same app takes the same). */
export const connectionLimitsOf = (server: Server): ConnectionLimits => applied.get(server) ?? DEFAULT_CONNECTION_LIMITS

/**
 * Sets the limits on a server before it listens (Node starts its checks
 * when it does). A request past its time is answered 408 by the server's
 * clientError handler and its connection closed. No idle timeout is set:
 * an approve-request's connection is silent while it waits, and so is the
 * dashboard's feed between events.
 */
export function applyConnectionLimits(server: Server, limits: ConnectionLimits, warn: (message: string) => void = () => undefined): void {
  applied.set(server, limits)
  server.headersTimeout = limits.headersTimeoutMs
  server.requestTimeout = limits.requestTimeoutMs
  ;(server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = Math.min(CHECK_INTERVAL_MS, limits.headersTimeoutMs)
  refuseConnectionsBeyond(server, limits.maxConnections, warn)
}

/**
 * Answers a connection past `max` with 503 too_many_connections and closes
 * it, without reading a byte of it. Not Node's maxConnections: that closes
 * such a connection unanswered, and fetch (undici) then waits forever
 * instead of failing. The operator hears of refusals once a minute at most.
 * Only accepted sockets count: a request replayed without its upgrade
 * offer (upgradeOffers.ts) rides on a socket already counted.
 */
function refuseConnectionsBeyond(server: Server, max: number, warn: (message: string) => void): void {
  const serve = server.listeners('connection') as ((socket: Duplex) => void)[]
  server.removeAllListeners('connection')
  let open = 0
  let refused = 0
  let lastWarnedMs = -Infinity
  server.on('connection', (socket: Duplex) => {
    if (!(socket instanceof Socket)) {
      for (const listener of serve) listener.call(server, socket)
      return
    }
    if (open >= max) {
      refused += 1
      if (Date.now() - lastWarnedMs >= REFUSAL_WARNING_INTERVAL_MS) {
        lastWarnedMs = Date.now()
        warn(`${refused} connection(s) refused with 503: ${max} are open already (the connection limit)`)
        refused = 0
      }
      socket.on('error', () => socket.destroy())
      socket.end(rawJsonResponse(503, simpleErrorBody('too_many_connections', `the service holds ${max} connections already; retry shortly`), ['Retry-After: 1']))
      // A client that never reads its answer does not keep the socket.
      setTimeout(() => socket.destroy(), 1000).unref()
      return
    }
    open += 1
    socket.once('close', () => (open -= 1))
    for (const listener of serve) listener.call(server, socket)
  })
}
