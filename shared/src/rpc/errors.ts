/** A JSON-RPC error object, thrown by handlers and raised by clients. */
export class RpcError extends Error {
  override name = 'RpcError'
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message)
  }
}

/** The peer is not there (no socket, refused, connection dropped mid-call). */
export class RpcUnavailableError extends Error {
  override name = 'RpcUnavailableError'
}

/** No answer within the call's timeout. */
export class RpcTimeoutError extends Error {
  override name = 'RpcTimeoutError'
}

export const RPC_PARSE_ERROR = -32700
export const RPC_INVALID_REQUEST = -32600
export const RPC_METHOD_NOT_FOUND = -32601
export const RPC_INVALID_PARAMS = -32602
export const RPC_INTERNAL_ERROR = -32603
