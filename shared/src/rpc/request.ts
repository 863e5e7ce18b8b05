import { RPC_INVALID_REQUEST } from './errors.js'

export type RpcId = string | number | null

/** A well-formed request; `id` is undefined for a notification (no answer). */
export interface RpcRequest {
  id: RpcId | undefined
  method: string
  params: unknown
}

export type ParsedRequest =
  | { ok: true; request: RpcRequest }
  | { ok: false; id: RpcId; code: number; message: string }

function isValidId(id: unknown): id is RpcId {
  return id === null || typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id))
}

/** An own property only: nothing inherited (a polluted prototype included) is read. */
function own(obj: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(obj, key) ? obj[key] : undefined
}

function invalid(id: RpcId, message: string): ParsedRequest {
  return { ok: false, id, code: RPC_INVALID_REQUEST, message }
}

/**
 * Checks one decoded frame against JSON-RPC 2.0. Nothing in it is trusted:
 * only own properties are read, and batches (arrays) are not supported.
 */
export function parseRequest(msg: unknown): ParsedRequest {
  if (typeof msg !== 'object' || msg === null || Array.isArray(msg)) return invalid(null, 'invalid request: not an object')
  const req = msg as Record<string, unknown>
  const hasId = Object.hasOwn(req, 'id')
  const rawId = own(req, 'id')
  if (hasId && !isValidId(rawId)) return invalid(null, 'invalid request: id must be a string, a number or null')
  const id = hasId ? (rawId as RpcId) : null
  if (own(req, 'jsonrpc') !== '2.0') return invalid(id, 'invalid request: jsonrpc must be "2.0"')
  const method = own(req, 'method')
  if (typeof method !== 'string') return invalid(id, 'invalid request: method must be a string')
  const params = own(req, 'params')
  if (params !== undefined && (typeof params !== 'object' || params === null)) {
    return invalid(id, 'invalid request: params must be an object or an array')
  }
  return { ok: true, request: { id: hasId ? id : undefined, method, params } }
}
