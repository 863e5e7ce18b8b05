// Answers that fastify or Node's HTTP parser would otherwise write on their
// own, without the spec's error shapes or the X-Service-Version header: a
// request that is not HTTP at all, a header section or request line past
// Node's limit, a URL fastify cannot route. Type-only fastify import: see errors.ts.
import { STATUS_CODES, type IncomingMessage, type ServerOptions, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { httpErrorBody, simpleErrorBody } from './errorBodies.js'
import { responseHeaderLines, responseHeaders } from './responseHeaders.js'

interface ParserError extends Error {
  code?: string
}

/**
 * The status for a connection-level error: 408, 431 (llhttp counts the
 * request line and the headers against one limit, so an over-long URL lands
 * here too), else 400.
 */
export function clientErrorStatus(err: ParserError): number {
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return 408
  if (err.code === 'HPE_HEADER_OVERFLOW') return 431
  return 400
}

function clientErrorMessage(status: number, err: ParserError): string {
  switch (status) {
    case 408:
      return 'the request did not arrive in time'
    case 431:
      return 'the request line and headers are larger than the server accepts'
    default:
      return `the request is not valid HTTP/1.1 (${err.code ?? 'parse error'})`
  }
}

/** A whole HTTP/1.1 response with a JSON error body, for a socket no reply object owns (an upgrade, a parser error). */
export function rawJsonResponse(status: number, errorBody: object, extraHeaderLines: readonly string[] = []): string {
  const body = JSON.stringify(errorBody)
  return [
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    ...responseHeaderLines,
    ...extraHeaderLines,
    'Connection: close',
    '',
    body,
  ].join('\r\n')
}

/** The whole HTTP/1.1 response for a connection-level error, in the spec's 400 shape. */
export function clientErrorResponse(err: ParserError): string {
  const status = clientErrorStatus(err)
  return rawJsonResponse(status, httpErrorBody(status, clientErrorMessage(status, err)))
}

/**
 * ws's `wsClientError`: an upgrade to a WebSocket route whose handshake ws
 * refuses (no valid Sec-WebSocket-Key, an unsupported version, a malformed
 * subprotocol or extension header). Without a listener ws answers its own
 * text/html 400; this one answers the spec's 400 shape with the version
 * header, and, for a version it does not speak, the versions it does
 * (RFC 6455 §4.4). ws's messages are its own fixed words, never the client's.
 */
export function answerHandshakeError(err: Error, socket: Socket): void {
  if (socket.destroyed) return
  const versions = /version/i.test(err.message) ? ['Sec-WebSocket-Version: 13, 8'] : []
  if (socket.writable) socket.end(rawJsonResponse(400, httpErrorBody(400, `the WebSocket handshake is not valid: ${err.message}`), versions))
  socket.destroy()
}

/** fastify `clientErrorHandler`: Node's `clientError` event, raised before any request object exists. */
export function answerClientError(err: ParserError, socket: Socket): void {
  // A reset connection has nobody to answer (Node's own handler does the same).
  if (err.code === 'ECONNRESET' || socket.destroyed) return
  // A response already begun (a request timed out while its route answered early) would be corrupted by a second one; Node's own handler checks the same.
  const begun = (socket as Socket & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage?.headersSent === true
  if (socket.writable && !begun) socket.end(clientErrorResponse(err))
  socket.destroy()
}

/**
 * Node's `checkExpectation`: a request whose Expect header is anything but
 * 100-continue. Without a listener Node answers its own 417, with neither a
 * body nor the version header (found by review); RFC 9110 §10.1.1 lets a
 * server refuse such a request with 417 and these services do, in the spec's
 * shape, without echoing the header.
 */
export function answerExpectation(_req: IncomingMessage, res: ServerResponse): void {
  const body = JSON.stringify(httpErrorBody(417, 'the Expect header asks for something this service does not do: only 100-continue is supported'))
  res.writeHead(417, { ...responseHeaders, 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), connection: 'close' })
  res.end(body)
}

/** fastify `frameworkErrors`: a URL the router refuses before any route, hook or error handler runs. */
export function answerFrameworkError(err: FastifyError, _req: FastifyRequest, reply: FastifyReply): void {
  const status = err.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 414 : err.code === 'FST_ERR_BAD_URL' ? 400 : 500
  const message =
    status === 414 ? 'a path segment of the URL is longer than the server accepts' : status === 400 ? 'the URL is not validly percent-encoded' : 'internal error; see the service log'
  reply
    .headers(responseHeaders)
    .code(status)
    .send(status === 500 ? simpleErrorBody('internal_error', message) : httpErrorBody(status, message))
}

/**
 * The fastify options both HTTP services pass: the two handlers above, and
 * Node's own missing-Host 400 turned off so the Host guard answers (403, with
 * the version header) for every request, with or without a Host header.
 */
export const lowLevelErrorOptions = {
  clientErrorHandler: answerClientError,
  frameworkErrors: answerFrameworkError,
  http: { requireHostHeader: false } satisfies ServerOptions,
}
