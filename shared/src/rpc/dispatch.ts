import { RPC_METHOD_NOT_FOUND, RpcError } from './errors.js'
import { parseRequest } from './request.js'
import { errorResponse, internalErrorResponse, resultResponse, type RpcResponse } from './response.js'

export interface RpcCallContext {
  /** Aborted when the caller's connection closes: a long-running call can give up and clean up. */
  signal: AbortSignal
}

export type RpcHandler = (params: unknown, ctx: RpcCallContext) => unknown

export type RpcMethods = Record<string, RpcHandler>

/** Hears about failures that are bugs (not RpcErrors); they never reach the peer. */
export type InternalErrorSink = (err: unknown, method: string) => void

function lookup(methods: RpcMethods, name: string): RpcHandler | undefined {
  // Own properties only: "__proto__", "constructor" or "toString" are not methods.
  if (!Object.hasOwn(methods, name)) return undefined
  const handler = methods[name]
  return typeof handler === 'function' ? handler : undefined
}

/**
 * Runs one decoded frame against the method table and says what to answer
 * (null: nothing, for a notification). Never rejects. A handler's RpcError is
 * answered as is; anything else it throws is an internal error with a
 * generic message, reported to `onInternalError` only.
 */
export async function dispatch(
  msg: unknown,
  methods: RpcMethods,
  ctx: RpcCallContext,
  onInternalError: InternalErrorSink,
): Promise<RpcResponse | null> {
  const parsed = parseRequest(msg)
  if (!parsed.ok) return errorResponse(parsed.id, parsed.code, parsed.message)
  const { id, method, params } = parsed.request
  const handler = lookup(methods, method)
  if (!handler) return id === undefined ? null : errorResponse(id, RPC_METHOD_NOT_FOUND, `method not found: ${method}`)
  try {
    const result = await handler(params ?? {}, ctx)
    return id === undefined ? null : resultResponse(id, result)
  } catch (err) {
    if (err instanceof RpcError && Number.isInteger(err.code) && typeof err.message === 'string') {
      return id === undefined ? null : errorResponse(id, err.code, err.message, err.data)
    }
    try {
      onInternalError(err, method)
    } catch {
      // A failing logger must not take the answer down with it.
    }
    return id === undefined ? null : internalErrorResponse(id)
  }
}
