export const RPC_PARSE_ERROR = -32700
export const RPC_INVALID_REQUEST = -32600
export const RPC_METHOD_NOT_FOUND = -32601
export const RPC_INVALID_PARAMS = -32602
export const RPC_INTERNAL_ERROR = -32603

/**
 * A JSON-RPC error object. Handlers throw it to answer with that code,
 * message and data (-32602 for bad params, or an application code); clients
 * reject with it when the peer answers with an error.
 */
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

/**
 * The peer is not there: no socket file, connection refused or timed out, or
 * the connection dropped while the call was in flight. `sent` says which: false
 * when the call never reached the peer (it did not run), true when it was
 * written and the connection then failed (it may or may not have run; it is
 * never retried automatically).
 */
export class RpcUnavailableError extends Error {
  override name = 'RpcUnavailableError'
  constructor(
    message: string,
    readonly sent = false,
  ) {
    super(message)
  }
}

/** No answer within the call's timeout: the call may still run, or have run, on the peer. */
export class RpcTimeoutError extends Error {
  override name = 'RpcTimeoutError'
}
