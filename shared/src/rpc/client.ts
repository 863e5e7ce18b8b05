import net from 'node:net'
import { RpcTimeoutError, RpcUnavailableError } from './errors.js'
import { DEFAULT_MAX_FRAME_BYTES, encodeFrame, FrameDecoder } from './framing.js'
import { readResponse } from './response.js'

export interface RpcClientOptions {
  socketPath: string
  /** Per-call timeout (default 10 s); a call may override it. */
  timeoutMs?: number
  /** How long connecting may take before calls fail with RpcUnavailableError (default 2 s). */
  connectTimeoutMs?: number
  /** Largest accepted response frame in bytes (default 1 MiB). */
  maxFrameBytes?: number
}

export interface RpcCallOptions {
  timeoutMs?: number
}

export interface RpcClient {
  call<T>(method: string, params: unknown, opts?: RpcCallOptions): Promise<T>
  /** Fails the calls in flight and closes the connection; later calls fail with RpcUnavailableError. */
  close(): void
}

/** One connection; `calls` counts the calls in flight on it. */
interface Connection {
  socket: net.Socket
  ready: Promise<Connection>
  calls: number
}

interface InFlight {
  conn: Connection
  resolve: (v: unknown) => void
  reject: (e: Error) => void
  timer: NodeJS.Timeout
}

function describeSocketError(err: NodeJS.ErrnoException): string {
  if (err.code === 'ENOENT') return 'no socket file (is the service running?)'
  if (err.code === 'ECONNREFUSED') return 'connection refused (nothing listening)'
  return err.code ?? err.message
}

/**
 * A JSON-RPC client over one lazily opened Unix-socket connection, shared by
 * concurrent calls and multiplexed by id. A dropped connection fails the
 * calls in flight on it (never retried: a sign call is not idempotent from
 * here) and the next call reconnects, so a restarted server is picked up
 * without a new client. The socket holds the event loop open only while
 * calls are in flight.
 */
export function createRpcClient(opts: RpcClientOptions): RpcClient {
  const timeoutMs = opts.timeoutMs ?? 10_000
  const connectTimeoutMs = opts.connectTimeoutMs ?? 2_000
  const maxFrameBytes = opts.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES
  const inFlight = new Map<number, InFlight>()
  let current: Connection | null = null
  let closed = false
  let nextId = 1

  const unavailable = (why: string, sent = false) => new RpcUnavailableError(`cannot reach ${opts.socketPath}: ${why}`, sent)

  function finish(id: number): InFlight | undefined {
    const call = inFlight.get(id)
    if (!call) return undefined
    inFlight.delete(id)
    clearTimeout(call.timer)
    call.conn.calls--
    if (call.conn.calls === 0) call.conn.socket.unref()
    return call
  }

  /** Fails the calls sent on `conn`; a late close of an old connection leaves calls on a new one alone. */
  function failCallsOn(conn: Connection, err: Error) {
    for (const [id, call] of inFlight) if (call.conn === conn) finish(id)?.reject(err)
  }

  function onFrame(conn: Connection, msg: unknown) {
    const response = readResponse(msg)
    if (!response) return
    const call = inFlight.get(response.id)
    if (!call || call.conn !== conn) return // a late answer to a call that timed out
    finish(response.id)
    if (response.ok) call.resolve(response.result)
    else call.reject(response.error)
  }

  function connect(): Promise<Connection> {
    if (closed) return Promise.reject(unavailable('client closed'))
    if (current) return current.ready
    const socket = net.createConnection(opts.socketPath)
    let connected = false
    let failure: string | null = null
    let settle!: { resolve: (c: Connection) => void; reject: (e: Error) => void }
    const ready = new Promise<Connection>((resolve, reject) => {
      settle = { resolve, reject }
    })
    const conn: Connection = { socket, ready, calls: 0 }
    current = conn
    const timer = setTimeout(() => {
      failure = `connect timed out after ${connectTimeoutMs} ms`
      socket.destroy()
    }, connectTimeoutMs)
    socket.once('connect', () => {
      clearTimeout(timer)
      connected = true
      if (conn.calls === 0) socket.unref()
      settle.resolve(conn)
    })
    socket.on('error', (err: NodeJS.ErrnoException) => {
      failure ??= describeSocketError(err)
    })
    const decoder = new FrameDecoder(maxFrameBytes)
    socket.on('data', (chunk: Buffer) => {
      for (const frame of decoder.push(chunk)) if (frame.ok) onFrame(conn, frame.value)
    })
    socket.once('close', () => {
      clearTimeout(timer)
      if (current === conn) current = null
      const why = closed ? 'client closed' : connected ? 'connection closed' : (failure ?? 'connection failed')
      settle.reject(unavailable(why))
      // Calls on this connection were written to the peer: they may have run.
      failCallsOn(conn, unavailable(why, connected))
    })
    return ready
  }

  /**
   * The open connection, or a new one when the peer has already closed it
   * (a server closes connections left idle: rpc/connection.ts) and its close
   * has not been handled yet. Nothing of this call was written then, so
   * connecting again is safe; once, so a server that closes every connection
   * at once (its connection limit) still fails the call.
   */
  async function usableConnection(): Promise<Connection> {
    const conn = await connect()
    if (!conn.socket.destroyed && conn.socket.writable) return conn
    if (current === conn) current = null
    conn.socket.destroy()
    return connect()
  }

  return {
    async call<T>(method: string, params: unknown, callOpts: RpcCallOptions = {}): Promise<T> {
      const ms = callOpts.timeoutMs ?? timeoutMs
      const id = nextId++
      // Encoded first: params JSON cannot carry (BigInt, cycles) throw here, before anything is sent or registered.
      const line = encodeFrame({ jsonrpc: '2.0', id, method, params })
      const conn = await usableConnection()
      const { socket } = conn
      if (socket.destroyed || !socket.writable) throw unavailable('connection closed')
      return new Promise<T>((resolve, reject) => {
        const timer = setTimeout(() => {
          finish(id)
          reject(new RpcTimeoutError(`${method} on ${opts.socketPath} timed out after ${ms} ms`))
        }, ms)
        inFlight.set(id, { conn, resolve: resolve as (v: unknown) => void, reject, timer })
        conn.calls++
        socket.ref()
        socket.write(line, (err) => {
          // Part of the line may have reached the peer: treated as possibly run.
          if (err) finish(id)?.reject(unavailable(`write failed: ${(err as NodeJS.ErrnoException).code ?? err.message}`, true))
        })
      })
    },
    close() {
      if (closed) return
      closed = true
      const conn = current
      current = null
      if (conn) {
        failCallsOn(conn, unavailable('client closed', true))
        conn.socket.destroy()
      }
    },
  }
}
