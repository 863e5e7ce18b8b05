import { chmodSync } from 'node:fs'
import net from 'node:net'
import { serveConnection } from './connection.js'
import type { RpcMethods } from './dispatch.js'
import { DEFAULT_MAX_FRAME_BYTES } from './framing.js'
import { prepareSocketPath, type SocketMode } from './socketFile.js'

export interface RpcLogger {
  warn(message: string, fields?: Record<string, unknown>): void
  error(message: string, fields?: Record<string, unknown>): void
}

export interface RpcServerOptions {
  socketPath: string
  /** 0600 (default) or 0660 for a socket its directory's group may use (see ensurePrivateDir). */
  socketMode?: SocketMode
  methods: RpcMethods
  /** Largest accepted request frame in bytes (default 1 MiB). */
  maxFrameBytes?: number
  /** Connections beyond this are dropped at once (default 64). */
  maxConnections?: number
  /** Requests one connection may have running before reading pauses (default 256). */
  maxInFlightPerConnection?: number
  /** A started frame must be complete within this many ms (default 30 s); guards against slowloris peers. */
  frameTimeoutMs?: number
  /**
   * A connection with no request running or waiting and no frame begun is
   * closed after this many ms (default 5 min): idle connections would
   * otherwise hold the maxConnections slots for good.
   */
  idleTimeoutMs?: number
  logger?: RpcLogger
  /** Called for handler failures that are not RpcErrors (bugs); never sent to the peer. */
  onInternalError?: (err: unknown, method: string) => void
}

/** How long an idle connection is kept (RpcServerOptions.idleTimeoutMs). */
export const DEFAULT_IDLE_TIMEOUT_MS = 5 * 60_000

export interface RpcServer {
  listen(): Promise<void>
  close(): Promise<void>
}

function quietly<A extends unknown[]>(fn: ((...args: A) => void) | undefined): (...args: A) => void {
  return (...args) => {
    try {
      fn?.(...args)
    } catch {
      // Reporting must never break serving.
    }
  }
}

/**
 * JSON-RPC 2.0 over a Unix socket, mode 0600 in a 0700 directory. Requests
 * on one connection run concurrently and are answered by id; a bad frame is
 * answered with an error and the connection stays open.
 */
export function createRpcServer(opts: RpcServerOptions): RpcServer {
  const warn = quietly(opts.logger?.warn.bind(opts.logger))
  const logError = quietly(opts.logger?.error.bind(opts.logger))
  const internal = quietly((err: unknown, method: string) => {
    opts.onInternalError?.(err, method)
    if (opts.logger) logError('RPC handler failed', { method, error: err instanceof Error ? (err.stack ?? err.message) : String(err) })
  })
  const connection = {
    methods: opts.methods,
    maxFrameBytes: opts.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES,
    maxInFlight: opts.maxInFlightPerConnection ?? 256,
    frameTimeoutMs: opts.frameTimeoutMs ?? 30_000,
    idleTimeoutMs: opts.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS,
    onInternalError: internal,
    onWarning: warn,
  }
  const sockets = new Set<net.Socket>()
  const server = net.createServer((socket) => {
    sockets.add(socket)
    socket.once('close', () => sockets.delete(socket))
    serveConnection(socket, connection)
  })
  server.maxConnections = opts.maxConnections ?? 64
  let reportingErrors = false
  server.on('drop', () => warn('RPC connection dropped: too many connections', { socketPath: opts.socketPath, max: server.maxConnections }))

  return {
    async listen() {
      if (server.listening) return
      await prepareSocketPath(opts.socketPath, opts.socketMode ?? 0o600)
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject)
        server.listen(opts.socketPath, () => {
          server.off('error', reject)
          resolve()
        })
      })
      if (!reportingErrors) {
        server.on('error', (err) => logError('RPC server error', { socketPath: opts.socketPath, error: err.message }))
        reportingErrors = true
      }
      // The directory is already 0700, so nobody else could connect before this.
      chmodSync(opts.socketPath, opts.socketMode ?? 0o600)
    },
    async close() {
      for (const s of sockets) s.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
