// How long a client may take to send a request, and how many connections a
// server holds at once. fastify turns Node's 5-minute request timeout off
// (requestTimeout: 0), so a client that sent the headers and all but one
// byte of a 64 KB body held its ~70 KB forever; 1,500 of them held the
// gateway at +110 MB with none ever closed (found by review).
import type { Server } from 'node:http'

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
  /** Connections held at once; Node closes any beyond this as soon as it is accepted. */
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
const DROP_WARNING_INTERVAL_MS = 60_000

/**
 * Sets the limits on a server before it listens (Node starts its checks
 * when it does). A request past its time is answered 408 by the server's
 * clientError handler and its connection closed. No idle timeout is set:
 * an approve-request's connection is silent while it waits, and so is the
 * dashboard's feed between events.
 */
export function applyConnectionLimits(server: Server, limits: ConnectionLimits, warn: (message: string) => void = () => undefined): void {
  server.headersTimeout = limits.headersTimeoutMs
  server.requestTimeout = limits.requestTimeoutMs
  server.maxConnections = limits.maxConnections
  ;(server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = Math.min(CHECK_INTERVAL_MS, limits.headersTimeoutMs)
  // A closed connection gets no answer, so the operator hears of it here; once a minute at most, however many are closed.
  let dropped = 0
  let lastWarnedMs = -Infinity
  server.on('drop', () => {
    dropped += 1
    if (Date.now() - lastWarnedMs < DROP_WARNING_INTERVAL_MS) return
    lastWarnedMs = Date.now()
    warn(`${dropped} connection(s) closed unanswered: ${limits.maxConnections} are open already (the connection limit)`)
    dropped = 0
  })
}
