import { txRequestHash } from '../canonical/hash.js'
import type { Address, BuiltTx, TxIntent, TxRequest } from '../types.js'
import { describeIntent, specOf } from '../actions/index.js'
import { normalizeIntentAddresses, toChecksumAddress } from './addresses.js'
import { assertAggregatorRoute, checkAggregatorTx } from './aggregator.js'
import { BuildError } from './errors.js'
import type { RouterTable } from './routers.js'

/**
 * Intent → unsigned transaction, deterministically: the signer rebuilds every
 * transaction with this same function and refuses anything that differs.
 * Throws BuildError for client mistakes (router of another chain, amounts
 * beyond uint256, a wrong EIP-55 checksum).
 *
 * Addresses are normalised here as well as at the gateway's door: the signer
 * gets its intents from whoever reaches its socket, and an all-upper-case
 * address (schema-valid, valid EIP-55) made viem throw inside the signer, an
 * internal error with nothing audited instead of a refusal (found by review).
 */
export function buildTransaction(rawIntent: TxIntent, routers: RouterTable, opts: { fallbackReason?: string } = {}): BuiltTx {
  const intent = normalizeIntentAddresses(rawIntent)
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
export function buildAggregatorTransaction(rawIntent: TxIntent, quote: { to: Address; data: `0x${string}` }, routers: RouterTable): BuiltTx {
  const intent = normalizeIntentAddresses(rawIntent)
  assertAggregatorRoute(intent, routers)
  // In the form viem signs whatever case the quote (or a gateway) wrote it in; checkAggregatorTx compares without case.
  const to = toChecksumAddress(quote.to)
  const txRequest: TxRequest = { to, data: quote.data.toLowerCase() as `0x${string}`, value: '0', chainId: intent.chain.chainId, type: 'eip1559' }
  const check = checkAggregatorTx(intent, txRequest, routers)
  if (!check.ok) throw new BuildError('aggregator_mismatch', `the aggregator's transaction does not match the intent: ${check.problem}`)
  return {
    txRequest,
    txRequestHash: txRequestHash(txRequest, intent.wallet.address),
    description: describeIntent(intent, { router: to, requested: 'aggregator', path: 'aggregator' }),
  }
}
