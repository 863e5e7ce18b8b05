import { chmodSync, lstatSync, mkdirSync, statSync, unlinkSync } from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import {
  RPC_INTERNAL_ERROR,
  RPC_INVALID_REQUEST,
  RPC_METHOD_NOT_FOUND,
  RPC_PARSE_ERROR,
  RpcError,
} from './errors.js'
import { DEFAULT_MAX_FRAME_BYTES, encodeFrame, FrameDecoder } from './framing.js'

export interface RpcCallContext {
  /** Aborted when the caller's connection closes: a long-running call can give up and clean up. */
  signal: AbortSignal
}

export type RpcHandler = (params: unknown, ctx: RpcCallContext) => unknown

export interface RpcServerOptions {
  socketPath: string
  methods: Record<string, RpcHandler>
  maxFrameBytes?: number
  maxConnections?: number
  /** Called for handler failures that are not RpcErrors (bugs); never sent to the peer. */
  onInternalError?: (err: unknown, method: string) => void
}

export interface RpcServer {
  listen(): Promise<void>
  close(): Promise<void>
}

type Id = string | number | null

/**
 * JSON-RPC 2.0 over a Unix socket (mode 0600 in a 0700 directory). Requests
 * on one connection run concurrently and are answered by id; a bad frame is
 * answered with an error and the connection stays open.
 */
export function createRpcServer(opts: RpcServerOptions): RpcServer {
  const sockets = new Set<net.Socket>()
  const server = net.createServer((socket) => serve(socket))
  server.maxConnections = opts.maxConnections ?? 64

  function serve(socket: net.Socket): void {
    sockets.add(socket)
    const closed = new AbortController()
    socket.on('close', () => {
      sockets.delete(socket)
      closed.abort()
    })
    socket.on('error', () => socket.destroy())
    const decoder = new FrameDecoder(opts.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES)
    const send = (msg: unknown) => {
      if (!socket.destroyed) socket.write(encodeFrame(msg))
    }
    const fail = (id: Id, code: number, message: string, data?: unknown) =>
      send({ jsonrpc: '2.0', id, error: data === undefined ? { code, message } : { code, message, data } })
    socket.on('data', (chunk: Buffer) => {
      for (const frame of decoder.push(chunk)) {
        if (!frame.ok) {
          fail(null, frame.error === 'too_large' ? RPC_INVALID_REQUEST : RPC_PARSE_ERROR, frame.error === 'too_large' ? 'request frame too large' : 'parse error')
          continue
        }
        void handle(frame.value, send, fail, closed.signal)
      }
    })
  }

  async function handle(
    msg: unknown,
    send: (m: unknown) => void,
    fail: (id: Id, code: number, message: string, data?: unknown) => void,
    signal: AbortSignal,
  ) {
    if (typeof msg !== 'object' || msg === null || Array.isArray(msg)) return fail(null, RPC_INVALID_REQUEST, 'invalid request')
    const req = msg as Record<string, unknown>
    const hasId = 'id' in req
    const id = req.id
    if (hasId && !(typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) || id === null)) {
      return fail(null, RPC_INVALID_REQUEST, 'invalid request: bad id')
    }
    const replyId = (hasId ? id : null) as Id
    if (req.jsonrpc !== '2.0' || typeof req.method !== 'string') return fail(replyId, RPC_INVALID_REQUEST, 'invalid request')
    if ('params' in req && (typeof req.params !== 'object' || req.params === null)) {
      return fail(replyId, RPC_INVALID_REQUEST, 'invalid request: params must be an object or an array')
    }
    const method = Object.hasOwn(opts.methods, req.method) ? opts.methods[req.method] : undefined
    if (!method) return hasId ? fail(replyId, RPC_METHOD_NOT_FOUND, `method not found: ${req.method}`) : undefined
    try {
      const result = await method(req.params ?? {}, { signal })
      if (hasId) send({ jsonrpc: '2.0', id: replyId, result: result ?? null })
    } catch (err) {
      if (!hasId) return
      if (err instanceof RpcError) return fail(replyId, err.code, err.message, err.data)
      opts.onInternalError?.(err, req.method)
      return fail(replyId, RPC_INTERNAL_ERROR, 'internal error')
    }
  }

  return {
    async listen() {
      const dir = path.dirname(opts.socketPath)
      mkdirSync(dir, { recursive: true, mode: 0o700 })
      if ((statSync(dir).mode & 0o077) !== 0) chmodSync(dir, 0o700)
      // A socket left by a crashed process makes listen fail with EADDRINUSE.
      try {
        const st = lstatSync(opts.socketPath)
        if (!st.isSocket()) throw new Error(`${opts.socketPath} exists and is not a socket; refusing to remove it`)
        unlinkSync(opts.socketPath)
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
      }
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject)
        server.listen(opts.socketPath, () => {
          server.off('error', reject)
          resolve()
        })
      })
      chmodSync(opts.socketPath, 0o600)
    },
    async close() {
      for (const s of sockets) s.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
