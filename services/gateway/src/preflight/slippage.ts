// What really protects a swap from a bad price is the bound in its calldata:
// minAmountOut (exact in) or maxAmountIn (exact out). constraints.
// maxSlippageBps is only the agent's word for how much it tolerates; nothing
// on chain reads it. So the bound is held to it here, against what the
// simulation says the swap gets or pays at the latest block, and to the
// policy's maxSwapSlippageBps whatever the agent declared: the agent may
// declare up to 100%, and a minAmountOut of 1 wei with 10000 bps passed as
// protected while accepting any price, with no operator asked, so the wallet's
// tokens went to whoever moved the pool first (found by review). The signer
// has no network and cannot simulate: this check is the gateway's alone.
import type { BalanceDiff, TxIntent } from '@countersign/shared'

const BPS = 10_000n

const changeOf = (diffs: BalanceDiff[], token: string): bigint =>
  BigInt(diffs.find((d) => d.token.toLowerCase() === token.toLowerCase())?.change ?? '0')

/**
 * Why the swap's bound is looser than its declared maxSlippageBps, or the
 * policy's `ceilingBps`, allows (the smaller of the two), or null when it is
 * within it (or the intent is not a swap). `diffs` are the wallet's simulated
 * balance changes, null when the simulation did not succeed. A minAmountOut
 * of 0 accepts any price whatever was simulated. A bound the simulation
 * cannot be held to counts as unprotected, nobody having checked it: a node
 * without transfer tracing, or a simulation that reverted. The latter was
 * once left to simulation_reverted, whose 50 is not above the default
 * maxRiskScore: a swap preflighted before its router allowance was mined
 * reverted, and its 1-wei minAmountOut was signed and broadcast without an
 * operator once the allowance landed (found by two reviews).
 */
export function slippageProblem(intent: TxIntent, diffs: BalanceDiff[] | null, ceilingBps: number): string | null {
  const a = intent.action
  const declared = BigInt(intent.constraints.maxSlippageBps)
  const ceiling = BigInt(ceilingBps)
  const bps = declared < ceiling ? declared : ceiling
  const tolerance = declared <= ceiling ? `maxSlippageBps ${declared}` : `the policy's maxSwapSlippageBps ${ceiling} (the intent declares ${declared})`
  if (a.type === 'swap_exact_in') {
    const min = BigInt(a.minAmountOut)
    if (min === 0n) return 'minAmountOut is 0: the swap accepts any price, whatever maxSlippageBps says'
    if (diffs === null) return `the simulation did not succeed, so minAmountOut ${min} could not be checked against ${tolerance}`
    const out = changeOf(diffs, a.assetOut.address)
    if (out <= 0n) return `the simulation shows no amount of ${a.assetOut.address} received, so minAmountOut ${min} could not be checked against ${tolerance}`
    // The least the tolerance allows: the simulated output less it, rounded in the client's favour (down).
    const floor = (out * (BPS - clampBps(bps))) / BPS
    if (min >= floor) return null
    return `minAmountOut ${min} is below ${floor}, the simulated output ${out} less ${tolerance}: the swap is not protected to that slippage`
  }
  if (a.type === 'swap_exact_out') {
    const max = BigInt(a.maxAmountIn)
    if (diffs === null) return `the simulation did not succeed, so maxAmountIn ${max} could not be checked against ${tolerance}`
    const paid = -changeOf(diffs, a.assetIn.address)
    if (paid <= 0n) return `the simulation shows no amount of ${a.assetIn.address} paid, so maxAmountIn ${max} could not be checked against ${tolerance}`
    // The most the tolerance allows: the simulated input plus it, rounded in the client's favour (up).
    const ceilingIn = ceilDiv(paid * (BPS + bps), BPS)
    if (max <= ceilingIn) return null
    return `maxAmountIn ${max} is above ${ceilingIn}, the simulated input ${paid} plus ${tolerance}: the swap is not protected to that slippage`
  }
  return null
}

const ceilDiv = (a: bigint, b: bigint): bigint => (a + b - 1n) / b
/** More than 100% tolerance is no floor at all (0). */
const clampBps = (bps: bigint): bigint => (bps > BPS ? BPS : bps)
