import { chmodSync } from 'node:fs'
import http from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { prepareSocketPath, type SocketMode } from '@countersign/shared'
import { answerClientError, answerExpectation } from '@countersign/shared/http/lowLevelErrors'
import { applyConnectionLimits, connectionLimitsOf } from '@countersign/shared/http/connectionLimits'

/**
 * Serves the approver's HTTP app, the same routes and hooks, also on a Unix
 * socket (APPROVER_HTTP_SOCKET), which is where the gateway forwards the
 * dashboard, /v1/approvals/* and the feed. Over TCP, whoever binds the port
 * first while the approver restarts would receive the operator tokens the
 * gateway passes on; the socket's directory admits only the gateway.
 * Returns the function that closes it.
 */
export async function listenOnSocket(app: FastifyInstance, socketPath: string, mode: SocketMode): Promise<() => Promise<void>> {
  await prepareSocketPath(socketPath, mode)
  const server = http.createServer({ requireHostHeader: false }, app.routing)
  // The feed's upgrade goes to the WebSocket plugin's own listener, as on the TCP server.
  server.on('upgrade', (req: http.IncomingMessage, socket: Socket, head: Buffer) => app.server.emit('upgrade', req, socket, head))
  // CONNECT gets the TCP server's answer, not a dropped connection.
  server.on('connect', (req: http.IncomingMessage, socket: Socket, head: Buffer) => app.server.emit('connect', req, socket, head))
  server.on('clientError', (err: Error, socket: Socket) => answerClientError(err, socket))
  server.on('checkExpectation', answerExpectation)
  // The TCP server's limits: the gateway sends each request whole, but nothing else may hold this socket open either.
  applyConnectionLimits(server, connectionLimitsOf(app.server), (message) => app.log.warn(message))
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(socketPath, () => {
      server.off('error', reject)
      resolve()
    })
  })
  // The directory is private already, so nobody could connect before this.
  chmodSync(socketPath, mode)
  return () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
}
