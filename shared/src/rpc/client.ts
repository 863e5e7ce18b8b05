import net from 'node:net'
import { RpcError, RpcTimeoutError, RpcUnavailableError } from './errors.js'
import { encodeFrame, FrameDecoder } from './framing.js'

export interface RpcClientOptions {
  socketPath: string
  timeoutMs?: number
  connectTimeoutMs?: number
}

export interface RpcClient {
  call<T>(method: string, params: unknown, opts?: { timeoutMs?: number }): Promise<T>
  close(): void
}

interface InFlight {
  socket: net.Socket
  resolve: (v: unknown) => void
  reject: (e: Error) => void
  timer: NodeJS.Timeout
}

/**
 * A JSON-RPC client over one lazily opened Unix-socket connection, shared by
 * concurrent calls. A dropped connection fails the calls in flight (never
 * retried: a sign call is not idempotent from here) and the next call
 * reconnects, so a restarted server is picked up without a new client.
 */
export function createRpcClient(opts: RpcClientOptions): RpcClient {
  const timeoutMs = opts.timeoutMs ?? 10_000
  const connectTimeoutMs = opts.connectTimeoutMs ?? 2_000
  let socket: net.Socket | null = null
  let connecting: Promise<net.Socket> | null = null
  let nextId = 1
  const inFlight = new Map<number, InFlight>()

  const unavailable = (why: string) => new RpcUnavailableError(`cannot reach ${opts.socketPath}: ${why}`)

  /** Fails the calls sent on `on` (all calls when omitted); a late close of an old connection leaves new calls alone. */
  function failAll(err: Error, on?: net.Socket) {
    for (const [id, call] of inFlight) {
      if (on && call.socket !== on) continue
      clearTimeout(call.timer)
      inFlight.delete(id)
      call.reject(err)
    }
  }

  function connect(): Promise<net.Socket> {
    if (socket && !socket.destroyed) return Promise.resolve(socket)
    if (connecting) return connecting
    connecting = new Promise<net.Socket>((resolve, reject) => {
      const s = net.createConnection(opts.socketPath)
      const timer = setTimeout(() => {
        s.destroy()
        reject(unavailable('connect timed out'))
      }, connectTimeoutMs)
      s.once('connect', () => {
        clearTimeout(timer)
        socket = s
        resolve(s)
      })
      s.once('error', (err: NodeJS.ErrnoException) => {
        clearTimeout(timer)
        if (socket !== s) reject(unavailable(err.code ?? err.message))
      })
      const decoder = new FrameDecoder()
      s.on('data', (chunk: Buffer) => {
        for (const frame of decoder.push(chunk)) if (frame.ok) settle(frame.value)
      })
      s.on('close', () => {
        if (socket === s) socket = null
        failAll(unavailable('connection closed'), s)
      })
    }).finally(() => {
      connecting = null
    })
    return connecting
  }

  function settle(msg: unknown) {
    if (typeof msg !== 'object' || msg === null) return
    const m = msg as { id?: unknown; result?: unknown; error?: { code: number; message: string; data?: unknown } }
    if (typeof m.id !== 'number') return
    const call = inFlight.get(m.id)
    if (!call) return // a late answer to a call that timed out
    inFlight.delete(m.id)
    clearTimeout(call.timer)
    if (m.error) call.reject(new RpcError(m.error.code, m.error.message, m.error.data))
    else call.resolve(m.result)
  }

  return {
    async call<T>(method: string, params: unknown, callOpts: { timeoutMs?: number } = {}): Promise<T> {
      const s = await connect()
      const id = nextId++
      return new Promise<T>((resolve, reject) => {
        const timer = setTimeout(() => {
          inFlight.delete(id)
          reject(new RpcTimeoutError(`${method} on ${opts.socketPath} timed out after ${callOpts.timeoutMs ?? timeoutMs} ms`))
        }, callOpts.timeoutMs ?? timeoutMs)
        inFlight.set(id, { socket: s, resolve: resolve as (v: unknown) => void, reject, timer })
        s.write(encodeFrame({ jsonrpc: '2.0', id, method, params }))
      })
    },
    close() {
      socket?.destroy()
      socket = null
      failAll(unavailable('client closed'))
    },
  }
}
