import type net from 'node:net'
import { RPC_INVALID_REQUEST, RPC_PARSE_ERROR } from './errors.js'
import { dispatch, type InternalErrorSink, type RpcMethods } from './dispatch.js'
import { FrameDecoder, type FrameError } from './framing.js'
import { encodeResponse, errorResponse, type RpcResponse } from './response.js'

export interface ConnectionOptions {
  methods: RpcMethods
  maxFrameBytes: number
  /** At most this many requests of the connection run at once; the rest wait and reading pauses. */
  maxInFlight: number
  /** A frame must be complete this long after its first byte arrived, or the connection is closed. */
  frameTimeoutMs: number
  /** With nothing running, waiting or begun, the connection is closed after this long (see idleTimer below). */
  idleTimeoutMs: number
  onInternalError: InternalErrorSink
  onWarning: (message: string, fields?: Record<string, unknown>) => void
}

export function frameErrorResponse(error: FrameError, maxFrameBytes: number): RpcResponse {
  return error === 'too_large'
    ? errorResponse(null, RPC_INVALID_REQUEST, `request frame too large (limit ${maxFrameBytes} bytes)`)
    : errorResponse(null, RPC_PARSE_ERROR, 'parse error')
}

/**
 * Serves one accepted connection: frames in, requests run concurrently,
 * answers out by id. A bad frame is answered and the connection stays open.
 * At most `maxInFlight` requests run at once; further frames wait in a queue
 * and reading pauses while any wait or while the peer is not reading its
 * answers, so a peer cannot make the server buffer or run without bound.
 */
export function serveConnection(socket: net.Socket, o: ConnectionOptions): void {
  const closed = new AbortController()
  const decoder = new FrameDecoder(o.maxFrameBytes)
  const waiting: unknown[] = []
  let inFlight = 0
  let frameTimer: NodeJS.Timeout | null = null
  let idleTimer: NodeJS.Timeout | null = null

  const flow = () => {
    if (socket.destroyed) return
    const hold = waiting.length > 0 || socket.writableNeedDrain
    if (hold && !socket.isPaused()) socket.pause()
    else if (!hold && socket.isPaused()) socket.resume()
  }

  const send = (response: RpcResponse) => {
    if (socket.destroyed || !socket.writable) return
    // Answers that become ready together (one group commit releases several)
    // leave in one write: a write to the socket is a system call each.
    if (socket.writableCorked === 0) {
      socket.cork()
      process.nextTick(() => socket.uncork())
    }
    socket.write(encodeResponse(response, (err) => o.onInternalError(err, '(encoding a response)')))
  }

  const stopFrameTimer = () => {
    if (frameTimer) clearTimeout(frameTimer)
    frameTimer = null
  }

  const startFrameTimer = () => {
    frameTimer = setTimeout(() => {
      o.onWarning('closing an RPC connection: a frame stayed incomplete', { frameTimeoutMs: o.frameTimeoutMs })
      socket.destroy()
    }, o.frameTimeoutMs)
    frameTimer.unref()
  }

  // An idle connection still holds one of the server's maxConnections: a
  // peer that opened the limit's worth and sent nothing would lock every
  // later client out for good. One that has a request running or waiting, or
  // a frame begun (the frame timer's case), is not idle. A client reconnects
  // on its next call (rpc/client.ts).
  const armIdleTimer = () => {
    if (idleTimer) clearTimeout(idleTimer)
    idleTimer = null
    if (socket.destroyed || inFlight > 0 || waiting.length > 0 || decoder.midFrame) return
    idleTimer = setTimeout(() => socket.destroy(), o.idleTimeoutMs)
    idleTimer.unref()
  }

  const pump = () => {
    while (inFlight < o.maxInFlight && waiting.length > 0 && !socket.destroyed) {
      inFlight++
      void dispatch(waiting.shift(), o.methods, { signal: closed.signal }, o.onInternalError).then((response) => {
        inFlight--
        if (response) send(response)
        pump()
        armIdleTimer()
      })
    }
    flow()
  }

  socket.on('data', (chunk: Buffer) => {
    const frames = decoder.push(chunk)
    for (const frame of frames) {
      if (frame.ok) waiting.push(frame.value)
      else send(frameErrorResponse(frame.error, o.maxFrameBytes))
    }
    // The clock runs per frame: each completed frame restarts it.
    if (frames.length > 0 || !decoder.midFrame) stopFrameTimer()
    if (decoder.midFrame && !frameTimer) startFrameTimer()
    pump()
    armIdleTimer()
  })
  socket.on('drain', flow)
  socket.on('error', () => socket.destroy())
  socket.on('close', () => {
    stopFrameTimer()
    if (idleTimer) clearTimeout(idleTimer)
    waiting.length = 0
    closed.abort()
  })
  armIdleTimer()
}
