// How long a client may take to send a request, and how many connections a
// server holds at once. fastify turns Node's 5-minute request timeout off
// (requestTimeout: 0), so a client that sent the headers and all but one
// byte of a 64 KB body held its ~70 KB forever; 1,500 of them held the
// gateway at +110 MB with none ever closed (found by review).
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import { Socket } from 'node:net'
import { performance } from 'node:perf_hooks'
import type { Duplex } from 'node:stream'
import { httpErrorBody, simpleErrorBody } from './errorBodies.js'
import { rawJsonResponse } from './lowLevelErrors.js'
import { acceptedSocketOf } from './upgradeOffers.js'

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
  /**
   * Connections held at once. One more closes a connection that can be let
   * go to make room for it (see makeRoomOrRefuse); only when none can is it
   * answered 503 too_many_connections and closed.
   */
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
/**
 * How long a connection may take over its request before a newcomer at the
 * limit may take its place. Honest clients send their headers in one packet
 * and a body right behind them; this much is room for a slow network, not
 * for a client that dribbles.
 */
export const EVICTION_GRACE_MS = 1000

const applied = new WeakMap<Server, ConnectionLimits>()
/** For each connection a limited server holds, that server's way to follow it until it proves itself (markUnproven). */
const unprovenMarkers = new WeakMap<Duplex, (stream: Duplex) => () => void>()

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
  makeRoomOrRefuse(server, limits.maxConnections, warn)
}

/**
 * An upgraded connection that has not yet shown it is wanted: the
 * dashboard's feed before its operator token is accepted. Such a one is let
 * go to make room, once EVICTION_GRACE_MS old, like a request still being
 * sent; call the function returned when it has proven itself (or closes),
 * and from then on it is never let go. Before, upgraded connections were
 * never let go at all: anyone who could reach the port, no token needed,
 * could open `max` feeds that never sign in, hold each for the 5 s the feed
 * waits for a token plus the 30 s the WebSocket library waits for a closing
 * handshake the client never answers, reconnect, and keep every API client
 * out with 503s (found by review). A connection no limited server holds
 * is left as it is.
 */
export function markUnproven(stream: Duplex): () => void {
  return unprovenMarkers.get(stream)?.(stream) ?? (() => undefined)
}

/** One accepted connection, as far as letting it go to make room is concerned. */
interface HeldConnection {
  readonly socket: Socket
  /** What the HTTP server reads it through: the socket, or its replay without an upgrade offer (upgradeOffers.ts). */
  httpStream: Duplex
  /** Requests read whose answer is not yet over: more than one only when pipelined. */
  unanswered: number
  /** The request read last, while its answer is owed. */
  current: IncomingMessage | undefined
  /** socket.bytesRead when its last answer ended: more bytes since are its next request. */
  bytesReadWhenAnswered: number
  /** performance.now() when its last answer ended. */
  idleSince: number
  /** performance.now() when it joined `sending`, or `unproven`. */
  sendingSince: number
  released: boolean
}

/** Node's HTTP parser for a stream: gone once the stream is upgraded (or closed). */
const hasHttpParser = (stream: Duplex): boolean => (stream as Duplex & { parser?: unknown }).parser != null

/**
 * Holds at most `max` accepted connections. A newcomer past `max` makes room
 * if a connection can fairly be let go, else it is refused. Before, anyone
 * who could reach the port, no API key needed, could open `max` connections
 * that send their headers a byte at a time, hold every slot for the 10 s and
 * 30 s the timeouts allow, reconnect when cut, and keep every real client
 * out with 503s for as long as they liked; idle keep-alive connections held
 * slots the same way.
 *
 * Let go, in this order: a connection idle between requests (keep-alive)
 * for EVICTION_GRACE_MS or more, longest idle first, closed as its
 * keep-alive timeout would; then the one that has been sending its request
 * (nothing yet, headers or body) the longest, if for EVICTION_GRACE_MS or
 * more, answered 408 as at its request timeout, only sooner; then the
 * oldest upgraded connection not yet proven (markUnproven), if that old,
 * closed. The newcomer's
 * place is decided after the poll phase that accepted it. Never: a connection whose request has arrived and
 * awaits its answer (an approve-request waits up to 300 s for its
 * operator), nor an upgraded one in use (the dashboard's feed once signed
 * in; before, it goes last, see markUnproven).
 *
 * Only when nothing can go is the newcomer answered 503 too_many_connections
 * and closed, without a byte of it read. Not Node's maxConnections: that
 * closes such a connection unanswered, and fetch (undici) then waits forever
 * instead of failing. The operator hears once a minute at most how many were
 * let go and how many refused.
 *
 * Per request this costs a WeakMap lookup, moving one entry between two
 * insertion-ordered Sets and one 'close' listener on the response; which
 * connection can go is worked out only when a newcomer finds the limit
 * reached, from the front of the Sets. Only accepted sockets count: a
 * request replayed without its upgrade offer (upgradeOffers.ts) rides on a
 * socket already counted, and is followed as that socket's.
 */
function makeRoomOrRefuse(server: Server, max: number, warn: (message: string) => void): void {
  const serve = server.listeners('connection') as ((socket: Duplex) => void)[]
  server.removeAllListeners('connection')
  const held = new WeakMap<Duplex, HeldConnection>()
  /** Connections that had every request answered, in the order they went idle. */
  const idle = new Set<HeldConnection>()
  /**
   * Connections sending a request, or nothing yet, oldest first: each joins
   * with sendingSince = now, so insertion order is age. It may still hold a
   * connection whose request has since arrived; the search for room drops
   * those as it meets them.
   */
  const sending = new Set<HeldConnection>()
  /** Upgraded connections not yet proven (markUnproven), oldest first. */
  const unproven = new Set<HeldConnection>()
  let open = 0
  let evicted = 0
  let refused = 0
  let lastWarnedMs = -Infinity

  const warnAtMostOncePerInterval = () => {
    if (Date.now() - lastWarnedMs < REFUSAL_WARNING_INTERVAL_MS) return
    lastWarnedMs = Date.now()
    warn(
      `${max} connections are open (the connection limit): ${evicted} closed to make room for new ones (idle between requests, or sending a request for ${EVICTION_GRACE_MS} ms or more), ` +
        `${refused} refused with 503 because every open one was awaiting its answer, an upgraded one in use, or still within its first ${EVICTION_GRACE_MS} ms`,
    )
    evicted = 0
    refused = 0
  }

  const release = (conn: HeldConnection) => {
    if (conn.released) return
    conn.released = true
    open -= 1
    idle.delete(conn)
    sending.delete(conn)
    unproven.delete(conn)
  }

  const markUnprovenHere = (stream: Duplex) => {
    const conn = held.get(stream)
    if (conn === undefined || conn.released) return () => undefined
    idle.delete(conn)
    sending.delete(conn)
    conn.sendingSince = performance.now()
    unproven.add(conn)
    return () => void unproven.delete(conn)
  }

  const startSending = (conn: HeldConnection, now: number) => {
    idle.delete(conn)
    sending.delete(conn)
    conn.sendingSince = now
    sending.add(conn)
  }

  const answered = (conn: HeldConnection) => {
    conn.unanswered -= 1
    if (conn.unanswered > 0 || conn.released) return
    conn.current = undefined
    sending.delete(conn)
    conn.bytesReadWhenAnswered = conn.socket.bytesRead
    conn.idleSince = performance.now()
    idle.add(conn)
  }

  /** Closes a connection that can go, if any; each one it passes over is moved where it belongs, so no search goes over it twice. */
  const makeRoom = (): boolean => {
    const now = performance.now()
    for (const conn of idle) {
      if (!hasHttpParser(conn.httpStream)) {
        idle.delete(conn)
        continue
      }
      if (conn.socket.bytesRead !== conn.bytesReadWhenAnswered) {
        // Its next request has begun: counted as sending from now, since when in the idle time it began is not known.
        startSending(conn, now)
        continue
      }
      // Closing an idle connection races its client's next request (a request
      // the kernel holds unread is reset with it, unseen). The client that has
      // just had its answer is the likeliest to send again, so only one idle
      // for the grace or more goes, as for a keep-alive timeout; the others
      // went idle later still.
      if (now - conn.idleSince < EVICTION_GRACE_MS) break
      release(conn)
      conn.socket.destroy()
      return true
    }
    for (const conn of sending) {
      const awaitingAnswer = conn.unanswered > 1 || conn.current?.complete === true
      if (awaitingAnswer || !hasHttpParser(conn.httpStream)) {
        // Back in a Set when its answer ends or its next request begins; an upgraded one, never.
        sending.delete(conn)
        continue
      }
      if (now - conn.sendingSince < EVICTION_GRACE_MS) break
      release(conn)
      cutShort(conn)
      return true
    }
    for (const conn of unproven) {
      if (now - conn.sendingSince < EVICTION_GRACE_MS) break
      release(conn)
      conn.socket.destroy()
      return true
    }
    return false
  }

  /**
   * Answered 408 by the server's clientError handler, the answer a request
   * too slow for the timeouts gets, so an honest client on a slow link
   * learns why rather than seeing a reset it cannot tell from a crash; one
   * small write is all it costs for a client that never reads.
   */
  const cutShort = (conn: HeldConnection) => {
    const tooSlow = Object.assign(new Error('closed to make room for a new connection: the request was arriving too slowly'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' })
    if (!server.emit('clientError', tooSlow, conn.httpStream) && conn.httpStream.writable) {
      conn.httpStream.end(rawJsonResponse(408, httpErrorBody(408, 'the request did not arrive in time')))
    }
    conn.socket.destroy()
  }

  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    const conn = held.get(req.socket)
    if (conn === undefined) return
    conn.unanswered += 1
    conn.current = req
    startSending(conn, performance.now())
    res.once('close', () => answered(conn))
  })

  server.on('connection', (socket: Duplex) => {
    if (!(socket instanceof Socket)) {
      const accepted = acceptedSocketOf(socket)
      const conn = accepted && held.get(accepted)
      if (conn) {
        conn.httpStream = socket
        held.set(socket, conn)
        unprovenMarkers.set(socket, markUnprovenHere)
      }
      for (const listener of serve) listener.call(server, socket)
      return
    }
    if (open >= max) {
      // Decided after the rest of this poll phase: a request already on an
      // idle-looking connection, accepted in the same turn, is read first, so
      // that connection is seen sending and is not closed with its request
      // unread (found by review: ECONNRESET on a POST the server never saw).
      // No listener of the server's is on the socket yet: a reset meanwhile must not be an unhandled 'error'.
      const onError = () => socket.destroy()
      socket.on('error', onError)
      setImmediate(() => {
        socket.off('error', onError)
        if (!socket.destroyed) admit(socket)
      })
      return
    }
    admit(socket)
  })

  const admit = (socket: Socket) => {
    if (open >= max) {
      if (makeRoom()) {
        evicted += 1
        warnAtMostOncePerInterval()
      } else {
        refused += 1
        warnAtMostOncePerInterval()
        socket.on('error', () => socket.destroy())
        socket.end(rawJsonResponse(503, simpleErrorBody('too_many_connections', `the service holds ${max} connections already; retry shortly`), ['Retry-After: 1']))
        // A client that never reads its answer does not keep the socket.
        setTimeout(() => socket.destroy(), 1000).unref()
        return
      }
    }
    open += 1
    const now = performance.now()
    const conn: HeldConnection = { socket, httpStream: socket, unanswered: 0, current: undefined, bytesReadWhenAnswered: 0, idleSince: now, sendingSince: now, released: false }
    held.set(socket, conn)
    unprovenMarkers.set(socket, markUnprovenHere)
    sending.add(conn)
    socket.once('close', () => release(conn))
    for (const listener of serve) listener.call(server, socket)
  }
}
