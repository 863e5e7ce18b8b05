import { txRequestHash } from '../canonical/hash.js'
import type { Address, BuiltTx, TxIntent, TxRequest } from '../types.js'
import { describeIntent, specOf } from '../actions/index.js'
import { assertIntentChecksums } from './addresses.js'
import { assertAggregatorRoute, checkAggregatorTx } from './aggregator.js'
import { BuildError } from './errors.js'
import type { RouterTable } from './routers.js'

/**
 * Intent → unsigned transaction, deterministically: the signer rebuilds every
 * transaction with this same function and refuses anything that differs.
 * Throws BuildError for client mistakes (router of another chain, amounts
 * beyond uint256).
 */
export function buildTransaction(intent: TxIntent, routers: RouterTable, opts: { fallbackReason?: string } = {}): BuiltTx {
  assertIntentChecksums(intent)
  const spec = specOf(intent.action)
  const call = spec.build(intent, { routers, ...(opts.fallbackReason ? { fallbackReason: opts.fallbackReason } : {}) })
  const txRequest: TxRequest = { to: call.to, data: call.data, value: call.value.toString(), chainId: intent.chain.chainId, type: 'eip1559' }
  return { txRequest, txRequestHash: txRequestHash(txRequest, intent.wallet.address), description: spec.describe(intent, call.route) }
}

/** The contract a transaction calls (for contractAllowlist): the token, the router, or none for native. */
export function contractOf(intent: TxIntent, routers: RouterTable): Address | null {
  return specOf(intent.action).contract(intent, routers)
}

/**
 * An aggregator swap from the calldata of its quote. Not derivable from the
 * intent alone, so it is checked instead: first the intent itself, as the v3
 * path checks it, naming the aggregator router (assertAggregatorRoute); then
 * router, tokens, amount, minimum out, receiver, where the sold tokens go and
 * the flags must match it (checkAggregatorTx).
 */
export function buildAggregatorTransaction(intent: TxIntent, quote: { to: Address; data: `0x${string}` }, routers: RouterTable): BuiltTx {
  assertIntentChecksums(intent)
  assertAggregatorRoute(intent, routers)
  const txRequest: TxRequest = { to: quote.to, data: quote.data.toLowerCase() as `0x${string}`, value: '0', chainId: intent.chain.chainId, type: 'eip1559' }
  const check = checkAggregatorTx(intent, txRequest, routers)
  if (!check.ok) throw new BuildError('aggregator_mismatch', `the aggregator's transaction does not match the intent: ${check.problem}`)
  return {
    txRequest,
    txRequestHash: txRequestHash(txRequest, intent.wallet.address),
    description: describeIntent(intent, { router: quote.to, requested: 'aggregator', path: 'aggregator' }),
  }
}
