// Requests that ask to leave HTTP/1.1: an Upgrade offer (curl --http2 sends
// "Upgrade: h2c" on every plain-http request) and CONNECT. Only the
// WebSocket feed is ever upgraded; everything else is answered in HTTP/1.1.
import type { IncomingMessage, Server } from 'node:http'
import { Socket } from 'node:net'
import { Duplex } from 'node:stream'
import { httpErrorBody } from './errorBodies.js'
import { rawJsonResponse } from './lowLevelErrors.js'

type UpgradeListener = (req: IncomingMessage, socket: Socket, head: Buffer) => void

/** The comma-separated tokens of a header, lower-cased (Upgrade and Connection are case-insensitive lists). */
const headerTokens = (value: string | undefined): string[] => (value ?? '').split(',').map((t) => t.trim().toLowerCase()).filter((t) => t !== '')

/** A request that offers a WebSocket (RFC 6455 §4.1: "websocket" among the Upgrade protocols). */
export const offersWebSocket = (req: IncomingMessage): boolean => headerTokens(req.headers.upgrade).includes('websocket')

/** The path of a request target, without its query. */
const pathOf = (url: string | undefined): string => (url ?? '').split('?')[0]!

/**
 * The request head as it would have been written without the upgrade offer:
 * Upgrade dropped, "upgrade" taken out of Connection. Rebuilt from the
 * parsed head, which Node has already checked (no CR or LF in any value).
 */
export function headWithoutUpgrade(req: IncomingMessage): string {
  const lines = [`${req.method} ${req.url} HTTP/${req.httpVersion}`]
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i]!
    const value = req.rawHeaders[i + 1]!
    const lower = name.toLowerCase()
    if (lower === 'upgrade') continue
    if (lower === 'connection') {
      const kept = headerTokens(value).filter((t) => t !== 'upgrade')
      if (kept.length > 0) lines.push(`${name}: ${kept.join(', ')}`)
      continue
    }
    lines.push(`${name}: ${value}`)
  }
  return lines.join('\r\n') + '\r\n\r\n'
}

/**
 * A connection's bytes after a rewritten head, as a stream the HTTP server
 * can be handed as a new connection ('connection' takes any Duplex): what the
 * server writes goes to the real socket, and closing either closes both.
 */
class ReplayedConnection extends Duplex {
  private released = false
  private readonly detach: () => void

  constructor(
    private readonly socket: Socket,
    first: Buffer,
  ) {
    super()
    this.push(first)
    const onData = (chunk: Buffer) => {
      if (!this.push(chunk)) socket.pause()
    }
    const onEnd = () => this.push(null)
    const onClose = () => this.destroy()
    const onTimeout = () => this.emit('timeout')
    // The server's own error handling runs on this stream; a reset real socket just ends it.
    const onError = () => this.destroy()
    socket.on('data', onData).on('end', onEnd).on('close', onClose).on('timeout', onTimeout).on('error', onError)
    this.detach = () => socket.off('data', onData).off('end', onEnd).off('close', onClose).off('timeout', onTimeout).off('error', onError)
  }

  /**
   * Gives up the real socket, with what this stream had received and not yet
   * handed on, for a later request on the same connection that offers an
   * upgrade again: it is replayed over the real socket, not over this
   * stream. Before, each such request wrapped the wrapper before it, and one
   * connection pipelining about 3,000 "Upgrade: h2c" requests made every
   * byte and timer call recurse through 3,000 layers until the stack
   * overflowed and the process died (found by review).
   */
  release(): { socket: Socket; unread: Buffer } {
    this.released = true
    this.detach()
    const unread: Buffer[] = []
    for (let chunk: Buffer | null = this.read() as Buffer | null; chunk !== null; chunk = this.read() as Buffer | null) unread.push(chunk)
    return { socket: this.socket, unread: Buffer.concat(unread) }
  }

  /** The accepted connection this stream reads from. */
  get acceptedSocket(): Socket {
    return this.socket
  }

  override _read(): void {
    this.socket.resume()
  }
  override _write(chunk: Buffer, encoding: BufferEncoding, done: (err?: Error | null) => void): void {
    this.socket.write(chunk, encoding, done)
  }
  override _final(done: () => void): void {
    if (!this.released) this.socket.end()
    done()
  }
  override _destroy(err: Error | null, done: (err: Error | null) => void): void {
    // Once released, the real socket belongs to the stream that replays it now.
    if (!this.released) this.socket.destroy()
    done(err)
  }
  // What the server and the routes read of a socket: its addresses and timers.
  get remoteAddress(): string | undefined {
    return this.socket.remoteAddress
  }
  get remotePort(): number | undefined {
    return this.socket.remotePort
  }
  get remoteFamily(): string | undefined {
    return this.socket.remoteFamily
  }
  get localAddress(): string | undefined {
    return this.socket.localAddress
  }
  get localPort(): number | undefined {
    return this.socket.localPort
  }
  setTimeout(ms: number, onTimeout?: () => void): this {
    this.socket.setTimeout(ms)
    if (onTimeout) this.once('timeout', onTimeout)
    return this
  }
  setNoDelay(noDelay?: boolean): this {
    this.socket.setNoDelay(noDelay)
    return this
  }
  setKeepAlive(enable?: boolean, delayMs?: number): this {
    this.socket.setKeepAlive(enable, delayMs)
    return this
  }
}

/**
 * The accepted socket under a connection the HTTP server was handed: the
 * socket itself, or the one a replayed connection reads from; undefined for
 * any other stream.
 */
export function acceptedSocketOf(stream: Duplex): Socket | undefined {
  if (stream instanceof ReplayedConnection) return stream.acceptedSocket
  return stream instanceof Socket ? stream : undefined
}

/**
 * Serves a request that came with an upgrade offer as the plain HTTP/1.1
 * request it also is (RFC 9110 §7.8: a server may ignore Upgrade). Once a
 * server has an 'upgrade' listener, Node hands it every request with
 * Upgrade, its parser already gone and the body still unread in `head`
 * and the socket; so the head is written again without the offer and
 * replayed, with all that follows on the socket, to the socket's own server
 * as a new connection. The connection stays HTTP/1.1 for every later
 * request, under the same timeouts as any other.
 */
export function serveIgnoringUpgrade(req: IncomingMessage, socket: Socket, head: Buffer): void {
  const server = (socket as Socket & { server?: Server }).server
  if (!server) {
    socket.destroy()
    return
  }
  // Always one stream deep: a request on a replayed connection is replayed over the real socket again.
  const inner = socket instanceof ReplayedConnection ? socket.release() : { socket, unread: Buffer.alloc(0) }
  server.emit('connection', new ReplayedConnection(inner.socket, Buffer.concat([Buffer.from(headWithoutUpgrade(req), 'latin1'), head, inner.unread])))
}

/**
 * Keeps `server`'s 'upgrade' listeners for what they are for, WebSocket
 * offers to one of `webSocketPaths`, and serves every other request with
 * Upgrade as plain HTTP/1.1. Before, an "Upgrade: h2c" on any route was
 * answered 404 not_found by the gateway, which a client reads as "pending
 * or unknown" about a mined transaction (found by review).
 */
export function upgradeOnlyWebSockets(server: Server, webSocketPaths: readonly string[]): void {
  const listeners = server.listeners('upgrade') as UpgradeListener[]
  server.removeAllListeners('upgrade')
  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    // A WebSocket opening handshake is a GET (RFC 6455 §4.1); a POST offering one is a POST, served
    // as such. Before, the gateway forwarded it to the approver as a GET handshake (found by review).
    if (req.method !== 'GET' || !offersWebSocket(req) || !webSocketPaths.includes(pathOf(req.url))) {
      serveIgnoringUpgrade(req, socket, head)
      return
    }
    for (const listener of listeners) listener.call(server, req, socket, head)
  })
}

/** The answer to CONNECT: these services are no proxy. Without it Node drops the connection without a word. */
export function answerConnect(allow: string): (req: IncomingMessage, socket: Socket) => void {
  return (_req, socket) => {
    socket.on('error', () => socket.destroy())
    socket.end(rawJsonResponse(405, httpErrorBody(405, 'CONNECT is not supported: this service is not a proxy'), [`Allow: ${allow}`]))
  }
}
