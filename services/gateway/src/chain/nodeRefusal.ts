import {
  BaseError,
  ExecutionRevertedError,
  FeeCapTooHighError,
  FeeCapTooLowError,
  InsufficientFundsError,
  IntrinsicGasTooHighError,
  IntrinsicGasTooLowError,
  NonceMaxValueError,
  NonceTooHighError,
  NonceTooLowError,
  TipAboveFeeCapError,
  TransactionTypeNotSupportedError,
} from 'viem'

/** viem's names for a node saying no to the transaction itself (getNodeError), as opposed to failing to answer. */
const REFUSALS = [
  ExecutionRevertedError,
  InsufficientFundsError,
  IntrinsicGasTooHighError,
  IntrinsicGasTooLowError,
  NonceTooHighError,
  NonceTooLowError,
  NonceMaxValueError,
  FeeCapTooHighError,
  FeeCapTooLowError,
  TipAboveFeeCapError,
  TransactionTypeNotSupportedError,
]

/**
 * JSON-RPC codes with which a node refuses the transaction rather than
 * failing to answer: 3 "execution reverted" (EIP-1474, geth, anvil), -32003
 * "transaction rejected" (anvil, for a wallet that cannot pay value + gas),
 * and eth_simulateV1's validation range -38010..-38025 (fee cap too low,
 * nonce, intrinsic gas, insufficient funds, block gas limit, sender not an
 * EOA…). -38026 "client limit exceeded" is the node's own limit.
 */
export function isRefusalCode(code: number): boolean {
  return code === 3 || code === -32003 || (code <= -38010 && code >= -38025)
}

/**
 * How nodes word a transaction that halts in the EVM other than by a revert
 * (no code of their own: geth answers -32000, anvil -32603 "EVM error …"):
 * an invalid opcode (Solidity's assert before 0.8, SafeMath in old tokens),
 * a bad jump, the stack, out of gas, a state change in a static call.
 */
const VM_FAILURE = /invalid opcode|opcode .*not defined|invalid jump|stack (underflow|overflow|limit)|out of gas|write protection|static state change|EVM error|precompile|create collision|code size|max initcode/i

/**
 * Whether an error from eth_estimateGas or eth_call is the node refusing the
 * transaction (it would revert, the wallet cannot pay, …) and not the node
 * failing: a timeout, a refused connection, an HTTP 5xx or 429, an internal
 * error, an unknown answer. The first is a fact about the transaction (a
 * failed simulation, a refusal to sign it); the second is 502 rpc_error,
 * which a client may retry. Before, both read as "would fail on chain".
 */
export function isNodeRefusal(err: unknown): boolean {
  if (!(err instanceof BaseError)) return false
  return (
    err.walk((e) => {
      if (REFUSALS.some((kind) => e instanceof kind)) return true
      const { code, details, message } = e as { code?: unknown; details?: unknown; message?: unknown }
      if (typeof code !== 'number') return false
      // The node's own words (a JSON-RPC error's message), never a transport error's, which may quote the request.
      return isRefusalCode(code) || VM_FAILURE.test(typeof details === 'string' ? details : typeof message === 'string' ? message : '')
    }) !== null
  )
}
