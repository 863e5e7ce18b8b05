import type { PolicyConfig } from '../types.js'

/** DESIGN.md §3 "policy defaults". */
export function defaultPolicyConfig(): PolicyConfig {
  return {
    allowedChains: [1, 10, 42161, 8453],
    tokenAllowlist: [],
    contractAllowlist: [],
    recipientAllowlist: [],
    maxValueWei: null,
    maxApprovalAmount: null,
    requireApprovalAbove: { valueWei: '0' },
    maxRiskScore: 50,
    maxTxPerHour: 10,
    tokenLimits: {},
    unlimitedApprovals: 'require_approval',
    requireQuorumAbove: null,
  }
}
