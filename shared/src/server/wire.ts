// Response bodies of the public HTTP API (SPEC "Resources and their fields",
// DESIGN §3/§6 for what the spec leaves open), as clients read them. The
// gateway's routes and docs/openapi.json produce exactly these shapes; the
// TypeScript client (clients/ts) types every call with them.
import type { Address, Hex, PolicyDecision, TxRequest, AuditEvent } from '../types.js'

export interface HealthResult {
  status: 'ok'
  version: string
  uptime: number
}

/** POST /v1/tx/build */
export interface BuildResult {
  intentId: string
  txRequestHash: Hex
  description: string
  txRequest: TxRequest
}

export interface WireRiskFactor {
  id: string
  weight: number
  detail: string
}

export interface WireBalanceDiff {
  token: Address
  /** Signed amount in the token's smallest unit. */
  change: string
}

/** POST /v1/tx/preflight (a reverting simulation is a 200 with simulationSuccess false). */
export interface PreflightResult {
  intentId: string
  simulationSuccess: boolean
  riskScore: number
  gasEstimate: string
  warnings: string[]
  balanceDiffs: WireBalanceDiff[]
  riskReasons?: string[]
  riskFactors?: WireRiskFactor[]
  revertReason?: string | null
}

export type WirePolicyDecision = Omit<PolicyDecision, 'reasonCodes'>

/** POST /v1/tx/approve-request, 200: approved, or no approval needed (approvalRequired false, no token). */
export interface ApprovalResult {
  intentId: string
  approved: true
  approvalRequired?: boolean
  approvalTokenId?: string
  txRequestHash: Hex
  description: string
  riskScore: number
  warnings: string[]
  riskReasons?: string[]
  riskFactors?: WireRiskFactor[]
  gasEstimate?: string | null
  policyDecision?: WirePolicyDecision
}

/** POST /v1/tx/sign-and-send */
export interface SignAndSendResult {
  intentId: string
  signedTx: Hex
  txHash: Hex
  broadcast: boolean
  broadcastError: string | null
}

/** GET /v1/intents/:intentId/tx (not in SPEC): the transaction signed for an intent. */
export interface IntentTransaction {
  intentId: string
  chainId: number
  wallet: Address
  nonce: number
  txHash: Hex
  /** The node accepted it when countersign last sent it; false while it is being sent or when the node refused it. */
  broadcast: boolean
}

/** GET /v1/tx/:hash */
export interface Receipt {
  txHash: Hex
  status: 'success' | 'reverted'
  blockNumber: number
  gasUsed: string
  from?: Address
  to?: Address | null
  chainId?: number
  effectiveGasPrice?: string
  transactionHash?: Hex
  blockHash?: Hex
  contractAddress?: Address | null
}

/** GET /v1/balance/:token/:account */
export interface Balance {
  token: Address
  account: Address
  balance: string
  chainId: number
}

/** One entry of GET /v1/approvals/pending. The summary carries more than the spec's three fields. */
export interface PendingApproval {
  requestId: string
  ttlSeconds: number
  summary: {
    action: string
    riskScore: number
    warnings: string[]
    intentId?: string
    txRequestHash?: string
    [field: string]: unknown
  }
}

export interface PendingList {
  pending: PendingApproval[]
}

/** The votes of a request that needs more than one named operator. */
export interface DecideQuorum {
  required: number
  approvals: number
  approvedBy: string[]
  remaining: number
}

/**
 * POST /v1/approvals/:requestId/decide. `decided` is false when an approval
 * counted towards a quorum that is not met yet: the request is still waiting
 * (found by review: typed as always true, a tool took "one more operator
 * needed" for "approved").
 */
export interface DecideResult {
  decided: boolean
  requestId: string
  approved: boolean
  /** Who decided (named operators only). */
  operator?: string
  /** The votes, on quorum requests. */
  quorum?: DecideQuorum
  /** Quorum requests: false when this operator had already approved (the vote counted once). */
  counted?: boolean
}

export interface HistoryResult {
  events: AuditEvent[]
}

export interface SkillRegistered {
  registered: true
  name: string
  manifestHash: Hex
}

export interface SkillListEntry {
  name: string
  publisher: string
  actions: string[]
  chains: number[]
}

export interface SkillRevoked {
  name: string
  revoked: true
}

/** POST /v1/skills/:name/run */
export interface SkillRunResult {
  exitCode: number | null
  output: unknown
  durationMs: number
  error?: 'timeout' | 'memory' | 'tasks' | 'crash'
  stderr?: string
}
