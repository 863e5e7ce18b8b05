import type { PolicyConfig } from '../types.js'

/**
 * Why paying `costWei` in network fees (gas x maxFeePerGas) is refused by the
 * policy's maxGasCostWei, or null. The intent's own constraints.maxGasWei is
 * checked separately (its author chose it); this cap is the operator's, and
 * holds against an agent that writes a large maxGasWei, a gateway that lies
 * about fees, or a node that quotes a priority fee as large as the cap.
 */
export function gasCostPolicyProblem(policy: Pick<PolicyConfig, 'maxGasCostWei'>, costWei: bigint): string | null {
  if (policy.maxGasCostWei === null || costWei <= BigInt(policy.maxGasCostWei)) return null
  return `gas cost ${costWei} wei exceeds the policy's maxGasCostWei of ${policy.maxGasCostWei} wei`
}
