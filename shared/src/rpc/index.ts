// The public surface of the Unix-socket JSON-RPC channel; the rest of the folder is internal.
export {
  RpcError,
  RpcTimeoutError,
  RpcUnavailableError,
  RPC_INTERNAL_ERROR,
  RPC_INVALID_PARAMS,
  RPC_INVALID_REQUEST,
  RPC_METHOD_NOT_FOUND,
  RPC_PARSE_ERROR,
} from './errors.js'
export { DEFAULT_MAX_FRAME_BYTES, encodeFrame, FrameDecoder, type Frame, type FrameError } from './framing.js'
export type { RpcId } from './request.js'
export type { RpcErrorObject, RpcResponse } from './response.js'
export type { RpcCallContext, RpcHandler, RpcMethods } from './dispatch.js'
export { MAX_SOCKET_PATH_BYTES, prepareSocketPath, type SocketMode } from './socketFile.js'
export { createRpcServer, type RpcLogger, type RpcServer, type RpcServerOptions } from './server.js'
export { createRpcClient, type RpcCallOptions, type RpcClient, type RpcClientOptions } from './client.js'
