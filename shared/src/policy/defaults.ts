import type { PolicyConfig } from '../types.js'

/** DESIGN.md §3 "policy defaults". */
export function defaultPolicyConfig(): PolicyConfig {
  return {
    allowedChains: [1, 10, 42161, 8453],
    tokenAllowlist: [],
    contractAllowlist: [],
    recipientAllowlist: [],
    maxValueWei: null,
    // 0.05 ETH: five times the clients' default maxGasWei. Fees leave the
    // wallet like value does; without a cap of its own the only ceiling was
    // the figure in the intent (DESIGN.md has none; docs/operations.md).
    maxGasCostWei: '50000000000000000',
    maxApprovalAmount: null,
    requireApprovalAbove: { valueWei: '0' },
    maxRiskScore: 50,
    // DESIGN's "slippage > 300 bps" line: beyond it a swap's bound is loose enough that an operator must look.
    maxSwapSlippageBps: 300,
    maxTxPerHour: 10,
    tokenLimits: {},
    unlimitedApprovals: 'require_approval',
    requireQuorumAbove: null,
  }
}
