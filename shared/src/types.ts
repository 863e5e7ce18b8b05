// Wire types of the TxIntent and what is derived from it. The JSON Schemas in
// ./schemas validate exactly these shapes; keep both in step.

export type Address = `0x${string}`
export type Hex = `0x${string}`

export const SUPPORTED_CHAIN_IDS = [1, 10, 42161, 8453] as const
export type ChainId = (typeof SUPPORTED_CHAIN_IDS)[number]

export interface Asset {
  kind: 'erc20'
  address: Address
  /** Declared by the client; never trusted for anything but display. */
  symbol?: string
  decimals?: number
}

export type SwapProvider = 'v3_router' | 'aggregator'
/** Other clients' names for the same providers (DESIGN.md §6 "client compatibility"); see actions/providers.ts. */
export type SwapProviderAlias = 'uniswap_v3' | '1inch'

export interface TransferAction {
  type: 'transfer'
  asset: Asset
  to: Address
  amount: string
}
export interface TransferNativeAction {
  type: 'transfer_native'
  to: Address
  amount: string
}
export interface ApproveAction {
  type: 'approve'
  asset: Asset
  spender: Address
  amount: string
}
export interface SwapExactInAction {
  type: 'swap_exact_in'
  router: Address
  provider?: SwapProvider | SwapProviderAlias
  assetIn: Asset
  assetOut: Asset
  amountIn: string
  minAmountOut: string
}
export interface SwapExactOutAction {
  type: 'swap_exact_out'
  router: Address
  provider?: SwapProvider | SwapProviderAlias
  assetIn: Asset
  assetOut: Asset
  amountOut: string
  maxAmountIn: string
}
export type Action =
  | TransferAction
  | TransferNativeAction
  | ApproveAction
  | SwapExactInAction
  | SwapExactOutAction
export type ActionType = Action['type']
// What each action means (counterparties, outflows, builder, card) is its
// spec in ./actions; ACTION_TYPES is exported from there.

export interface TxIntent {
  version: '1'
  id: string
  /** Unix seconds or milliseconds (>= 1e12 means ms); see normaliseTimestampMs. */
  timestamp: number
  chain: { type: 'evm'; chainId: ChainId; rpcHint?: string }
  wallet: { address: Address; profile?: string }
  action: Action
  constraints: { maxGasWei: string; deadline: number; maxSlippageBps: number }
  metadata?: { source?: string; note?: string }
  preferences?: { speed?: 'slow' | 'normal' | 'fast'; privateRelay?: boolean }
}

/** The unsigned transaction a builder derives from an intent (SPEC "Build result"). */
export interface TxRequest {
  to: Address
  data: Hex
  value: string
  chainId: number
  type: 'eip1559'
}

export interface BuiltTx {
  txRequest: TxRequest
  txRequestHash: Hex
  description: string
}

export type Decision = 'allow' | 'deny' | 'require_approval'

export interface PolicyDecision {
  decision: Decision
  /** Human-readable reason texts, in rule order. */
  reasons: string[]
  /** Stable machine codes, one per reason, same order (audit uses these). */
  reasonCodes: string[]
  policyVersion: '1'
}

/** Per-token limits; amounts in the token's smallest unit. */
export interface TokenLimit {
  maxAmount?: string
  requireApprovalAbove?: string
  maxApprovalAmount?: string
}

export interface PolicyConfig {
  allowedChains: number[]
  tokenAllowlist: Address[]
  contractAllowlist: Address[]
  recipientAllowlist: Address[]
  /** Native value cap in wei; null means no cap. */
  maxValueWei: string | null
  /**
   * The most one transaction may pay in network fees (gas x maxFeePerGas), in
   * wei, whatever its intent's constraints.maxGasWei says (the intent's
   * author chooses that figure); null means no cap beyond the intent's.
   */
  maxGasCostWei: string | null
  /** Approve amount cap in the token's smallest unit; null means no cap. */
  maxApprovalAmount: string | null
  requireApprovalAbove: { valueWei: string }
  maxRiskScore: number
  /**
   * The most a swap's own bound (minAmountOut, maxAmountIn) may give away
   * against the simulated price, in basis points, without an operator, whatever
   * the intent's constraints.maxSlippageBps says (the intent's author chooses
   * that figure, up to 100%). Default 300.
   */
  maxSwapSlippageBps: number
  maxTxPerHour: number
  /** Keys are token addresses (any case). */
  tokenLimits: Record<string, TokenLimit>
  /** What an approve of 2^96 - 1 or more (an "unlimited" allowance) gets; default require_approval. */
  unlimitedApprovals: UnlimitedApprovals
  /** Requests above these figures need `approvals` distinct named operators (DESIGN §6 "quorum"); null: none do. */
  requireQuorumAbove: QuorumRule | null
}

/**
 * `requireQuorumAbove`: a native value (wei) and per-token amounts (smallest
 * unit, lowercase address keys) above which one operator is not enough. An
 * approve's allowance counts like a transfer of its amount.
 */
export interface QuorumRule {
  /** null: native value never needs a quorum. */
  valueWei: string | null
  tokens: Record<string, string>
  /** How many distinct named operators must approve (2 or more). */
  approvals: number
}

export const UNLIMITED_APPROVAL_RULES = ['require_approval', 'deny', 'allow'] as const
export type UnlimitedApprovals = (typeof UNLIMITED_APPROVAL_RULES)[number]

export interface AuditEvent {
  id: string
  timestamp: number
  intentId: string
  event: string
  data: Record<string, unknown>
}

/** Injected wherever time matters, so tests never sleep. Milliseconds. */
export type Clock = () => number
export const systemClock: Clock = () => Date.now()
