import { RPC_INTERNAL_ERROR, RpcError } from './errors.js'
import { encodeFrame } from './framing.js'
import type { RpcId } from './request.js'

export interface RpcErrorObject {
  code: number
  message: string
  data?: unknown
}

export type RpcResponse =
  | { jsonrpc: '2.0'; id: RpcId; result: unknown }
  | { jsonrpc: '2.0'; id: RpcId; error: RpcErrorObject }

export const INTERNAL_ERROR_MESSAGE = 'internal error'

export function resultResponse(id: RpcId, result: unknown): RpcResponse {
  return { jsonrpc: '2.0', id, result: result === undefined ? null : result }
}

export function errorResponse(id: RpcId, code: number, message: string, data?: unknown): RpcResponse {
  return { jsonrpc: '2.0', id, error: data === undefined ? { code, message } : { code, message, data } }
}

export function internalErrorResponse(id: RpcId): RpcResponse {
  return errorResponse(id, RPC_INTERNAL_ERROR, INTERNAL_ERROR_MESSAGE)
}

/**
 * A frame for the response that never throws. A result JSON cannot carry
 * (BigInt, a cycle) becomes an internal error; unserialisable error data is
 * dropped and the code and message kept. `onUnencodable` hears why.
 */
export function encodeResponse(response: RpcResponse, onUnencodable?: (err: unknown) => void): string {
  try {
    return encodeFrame(response)
  } catch (err) {
    onUnencodable?.(err)
  }
  if ('error' in response && typeof response.error.message === 'string') {
    const { code, message } = response.error
    return encodeFrame(errorResponse(response.id, code, message))
  }
  return encodeFrame(internalErrorResponse(response.id))
}

export type ReadResponse = { id: number; ok: true; result: unknown } | { id: number; ok: false; error: RpcError }

function readError(error: unknown): RpcError {
  if (typeof error !== 'object' || error === null) return new RpcError(RPC_INTERNAL_ERROR, 'malformed error response')
  const e = error as Record<string, unknown>
  if (!Number.isInteger(e.code) || typeof e.message !== 'string') return new RpcError(RPC_INTERNAL_ERROR, 'malformed error response')
  return new RpcError(e.code as number, e.message, Object.hasOwn(e, 'data') ? e.data : undefined)
}

/**
 * Reads a response on the client side. Our client only sends numeric ids, so
 * anything else (including id null, which a server uses for a frame it could
 * not attribute) is not an answer to one of our calls and yields null.
 */
export function readResponse(msg: unknown): ReadResponse | null {
  if (typeof msg !== 'object' || msg === null || Array.isArray(msg)) return null
  const m = msg as Record<string, unknown>
  if (typeof m.id !== 'number') return null
  if (Object.hasOwn(m, 'error')) return { id: m.id, ok: false, error: readError(m.error) }
  if (Object.hasOwn(m, 'result')) return { id: m.id, ok: true, result: m.result }
  return { id: m.id, ok: false, error: new RpcError(RPC_INTERNAL_ERROR, 'malformed response: neither result nor error') }
}
