// The aggregator's quote names its own route and its own minimum, and the
// agent's documented flow (preflight, then minAmountOut = expected − 0.5%)
// simulates that same route: a malicious aggregator sets the price and the
// intent's minimum follows it. The one price it does not control is the
// route the gateway builds anyway for the same intent, Uniswap v3, so the
// aggregator's guaranteed minimum must be at least what v3 would deliver,
// less the slippage the intent accepts. The signer cannot check this (no
// network); checkAggregatorTx bounds what it can.
import { decodeAbiParameters, decodeFunctionResult, encodeFunctionData, erc20Abi, type Hex, type PublicClient } from 'viem'
import { swapRouter02Abi, v3SwapData, type Address, type RouterTable, type SwapExactInAction, type TxIntent } from '@countersign/shared'
import type { ChainClients } from '../chain/chainClients.js'
import { rpcMessage } from '../chain/chainClients.js'
import { decodeRevertReason } from '../preflight/revertReason.js'

type AggregatorIntent = TxIntent & { action: SwapExactInAction }

/** What the v3 route would deliver for the intent now, or why that is unknown. */
export type V3Expectation = { ok: true; amountOut: bigint } | { ok: false; problem: string }

export type V3Reference = (intent: AggregatorIntent) => Promise<V3Expectation>

/** The aggregator's quote was well formed but is not used; the message is the fallback reason. */
export class AggregatorRefused extends Error {
  override name = 'AggregatorRefused'
}

/**
 * The least the aggregator must guarantee: the v3 output less the slippage
 * accepted (slippageBpsFor), rounded down. An honest quote's minimum is its own expected
 * output less that same slippage (the gateway asks with it), so this admits
 * every quote at least as good as v3 and refuses the ones v3 beats, where the
 * fallback is the better trade anyway.
 */
export function minimumAgainstV3(v3AmountOut: bigint, maxSlippageBps: number): bigint {
  const bps = BigInt(Math.min(Math.max(maxSlippageBps, 0), 10_000))
  return (v3AmountOut * (10_000n - bps)) / 10_000n
}

/**
 * The slippage an aggregator quote may take from the v3 price: the intent's
 * maxSlippageBps, never more than the policy's maxSwapSlippageBps. Found by
 * review: the intent's figure alone let an agent declare 10000 bps, and an
 * aggregator paying a tenth of the market was signed with no operator (the
 * preflight's slippage check measures against the aggregator's own route,
 * whose output its executor decides).
 */
export function slippageBpsFor(intent: AggregatorIntent, policyMaxSlippageBps: number): number {
  return Math.min(intent.constraints.maxSlippageBps, policyMaxSlippageBps)
}

/**
 * Throws AggregatorRefused unless the quote's guaranteed minimum reaches
 * minimumAgainstV3. Without a v3 figure (no RPC for the chain, no pool, the
 * wallet short of the tokens, a node without eth_simulateV1) nothing bounds
 * the aggregator's price, so it is refused too: the v3 route it falls back to
 * says on chain whether it can go through at all. Amounts are base units of
 * the output token: the declared decimals are the client's, not the chain's.
 */
export function assertAggregatorPrice(intent: AggregatorIntent, guaranteed: bigint, v3: V3Expectation, policyMaxSlippageBps: number): bigint {
  if (!v3.ok) throw new AggregatorRefused(`the Uniswap v3 route could not be priced to check the aggregator's minimum against (${v3.problem})`)
  const bps = slippageBpsFor(intent, policyMaxSlippageBps)
  const floor = minimumAgainstV3(v3.amountOut, bps)
  if (guaranteed < floor) {
    const whose = bps < intent.constraints.maxSlippageBps ? `the policy's maxSwapSlippageBps of ${bps} (the intent declares ${intent.constraints.maxSlippageBps})` : `the intent's ${bps} bps slippage`
    throw new AggregatorRefused(
      `its guaranteed minimum of ${guaranteed} base units of ${intent.action.assetOut.address} is below the ${floor} that the Uniswap v3 route's ${v3.amountOut} less ${whose} gives`,
    )
  }
  return v3.amountOut
}

/**
 * The longest an aggregator intent's deadline may lie ahead when it is
 * first built. The aggregator's swap() takes no deadline (unlike v3's
 * multicall(deadline, …)), so the deadline is enforced only at build, approve
 * and sign; the route chosen at the first build is stored and signed at any
 * time until then, its minimum checked against the v3 price of that first
 * build. Signing happens before the deadline, so this bounds how stale that
 * check can be when the transaction is signed (not how long a signed
 * transaction may wait to be mined: docs/ARCHITECTURE.md "Aggregator swaps").
 * Clients' default deadlines are 10 to 15 minutes.
 */
export const MAX_AGGREGATOR_DEADLINE_SECONDS = 30 * 60

/** Throws AggregatorRefused for an intent whose deadline is further ahead than MAX_AGGREGATOR_DEADLINE_SECONDS. */
export function assertAggregatorDeadline(intent: TxIntent, nowMs: number): void {
  const ahead = intent.constraints.deadline - Math.floor(nowMs / 1000)
  if (ahead > MAX_AGGREGATOR_DEADLINE_SECONDS) {
    throw new AggregatorRefused(
      `the intent's deadline is ${ahead} s away, more than the ${MAX_AGGREGATOR_DEADLINE_SECONDS} s an aggregator quote is used for: the aggregator's swap carries no deadline on chain, the v3 route does`,
    )
  }
}

/**
 * Simulates the v3 swap the gateway would build for this intent, with no
 * minimum out, from the wallet on top of the latest block (eth_simulateV1):
 * first the wallet approves the v3 router for the amount (to 0 first, for
 * tokens that refuse changing a non-zero allowance), since a wallet about to
 * use the aggregator need not have approved v3. Nothing is signed or sent; the
 * wallet must hold the tokens, as it must for the aggregator's swap too.
 */
export function createV3Reference(chains: ChainClients, routers: RouterTable): V3Reference {
  return async (intent) => {
    const chainId = intent.chain.chainId
    const router = routers.v3[chainId]
    if (!router) return { ok: false, problem: `no v3 router is configured for chain ${chainId}` }
    if (!chains.has(chainId)) return { ok: false, problem: `no RPC endpoint is configured for chain ${chainId}` }
    try {
      return await simulateV3Out(chains.get(chainId).client, intent, router)
    } catch (err) {
      return { ok: false, problem: `simulation failed: ${rpcMessage(err)}` }
    }
  }
}

interface SimulatedCall {
  status: string
  returnData: string
  error?: { message?: string; data?: string }
}

async function simulateV3Out(client: PublicClient, intent: AggregatorIntent, router: Address): Promise<V3Expectation> {
  const a = intent.action
  const from = intent.wallet.address
  const approve = (amount: bigint) => ({ from, to: a.assetIn.address, data: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [router, amount] }) })
  const swap = { from, to: router, data: v3SwapData({ ...a, minAmountOut: '0' }, from, intent.constraints.deadline) }
  const result = (await client.request({
    method: 'eth_simulateV1' as never,
    params: [{ blockStateCalls: [{ calls: [approve(0n), approve(BigInt(a.amountIn)), swap] }], validation: false }, 'latest'] as never,
  })) as Array<{ calls: SimulatedCall[] }>
  const c = result[0]?.calls[2]
  if (!c) return { ok: false, problem: 'eth_simulateV1 returned no result for the swap' }
  if (c.status !== '0x1') return { ok: false, problem: `the v3 swap reverts: ${decodeRevertReason(c.error?.data ?? c.returnData, c.error?.message)}` }
  return amountOutOf(c.returnData as Hex)
}

/** multicall returns bytes[]; its one call, exactInputSingle, returns amountOut. */
function amountOutOf(returnData: Hex): V3Expectation {
  try {
    const [first] = decodeFunctionResult({ abi: swapRouter02Abi, functionName: 'multicall', data: returnData }) as readonly Hex[]
    if (!first) return { ok: false, problem: 'the v3 router returned no result' }
    return { ok: true, amountOut: decodeAbiParameters([{ type: 'uint256' }], first)[0] }
  } catch {
    return { ok: false, problem: 'the v3 router’s answer is not multicall’s (is there a router at that address?)' }
  }
}
