import { txRequestHash } from '../canonical/hash.js'
import type { Address, BuiltTx, TxIntent, TxRequest } from '../types.js'
import { uint256 } from './amounts.js'
import { describeIntent } from './describe.js'
import { erc20ApproveData, erc20TransferData } from './erc20.js'
import { assertIntentChecksums } from './addresses.js'
import { checkAggregatorTx } from './aggregator.js'
import { BuildError } from './errors.js'
import type { RouterTable } from './routers.js'
import { resolveSwapRoute, v3SwapData } from './swap.js'

/**
 * Intent → unsigned transaction, deterministically: the signer rebuilds every
 * transaction with this same function and refuses anything that differs.
 * Throws BuildError for client mistakes (router of another chain, amounts
 * beyond uint256).
 */
export function buildTransaction(intent: TxIntent, routers: RouterTable, opts: { fallbackReason?: string } = {}): BuiltTx {
  assertIntentChecksums(intent)
  const a = intent.action
  const chainId = intent.chain.chainId
  let txRequest: TxRequest
  let route
  switch (a.type) {
    case 'transfer':
      txRequest = { to: a.asset.address, data: erc20TransferData(a), value: '0', chainId, type: 'eip1559' }
      break
    case 'approve':
      txRequest = { to: a.asset.address, data: erc20ApproveData(a), value: '0', chainId, type: 'eip1559' }
      break
    case 'transfer_native':
      txRequest = { to: a.to, data: '0x', value: uint256(a.amount, 'action.amount').toString(), chainId, type: 'eip1559' }
      break
    case 'swap_exact_in':
    case 'swap_exact_out':
      route = { ...resolveSwapRoute(a, chainId, routers), ...(opts.fallbackReason ? { fallbackReason: opts.fallbackReason } : {}) }
      txRequest = { to: route.router, data: v3SwapData(a, intent.wallet.address, intent.constraints.deadline), value: '0', chainId, type: 'eip1559' }
      break
  }
  return { txRequest, txRequestHash: txRequestHash(txRequest, intent.wallet.address), description: describeIntent(intent, route) }
}

/** The contract a transaction calls (for contractAllowlist): the token, the router, or none for native. */
export function contractOf(intent: TxIntent, routers: RouterTable): Address | null {
  const a = intent.action
  switch (a.type) {
    case 'transfer':
    case 'approve':
      return a.asset.address
    case 'transfer_native':
      return null
    case 'swap_exact_in':
    case 'swap_exact_out':
      return resolveSwapRoute(a, intent.chain.chainId, routers).router
  }
}

/**
 * An aggregator swap from the calldata of its quote. Not derivable from the
 * intent alone, so it is checked instead: router, tokens, amount, minimum
 * out and receiver must match the intent (checkAggregatorTx).
 */
export function buildAggregatorTransaction(intent: TxIntent, quote: { to: Address; data: `0x${string}` }, routers: RouterTable): BuiltTx {
  assertIntentChecksums(intent)
  const txRequest: TxRequest = { to: quote.to, data: quote.data.toLowerCase() as `0x${string}`, value: '0', chainId: intent.chain.chainId, type: 'eip1559' }
  const check = checkAggregatorTx(intent, txRequest, routers)
  if (!check.ok) throw new BuildError('aggregator_mismatch', `the aggregator's transaction does not match the intent: ${check.problem}`)
  return {
    txRequest,
    txRequestHash: txRequestHash(txRequest, intent.wallet.address),
    description: describeIntent(intent, { router: quote.to, requested: 'aggregator', path: 'aggregator' }),
  }
}
