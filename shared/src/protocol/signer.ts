// The signer's whole external interface (DESIGN.md §1–2), like Clef's: three
// methods on signer.sock for the gateway, two on grant.sock for the approver
// (minting a token, and waiting until the tokens minted are on disk).
// Nothing here signs raw data, messages or calldata: every signature derives
// from a TxIntent that the signer rebuilds itself.
import { amountSchema, txHashSchema, txIntentSchema, txRequestSchema, uuidSchema } from '../schemas/index.js'
import type { Hex, TxIntent, TxRequest } from '../types.js'

export const SIGNER_SOCKET = 'signer.sock'
export const GRANT_SOCKET = 'grant.sock'

export const signerMethods = {
  sign: 'sign',
  accounts: 'accounts',
  health: 'health',
  grantApproval: 'grantApproval',
  grantsDurable: 'grantsDurable',
} as const

export interface SignParams {
  intent: TxIntent
  txRequest: TxRequest
  approvalTokenId?: string
  /** Chosen by the gateway's per-wallet queue. */
  nonce: number
  gas: string
  maxFeePerGas: string
  maxPriorityFeePerGas: string
  /**
   * The txHash of this intent's stored signature when the gateway found it can
   * never be mined: its nonce is used by a mined transaction and it has no
   * receipt. The signer then signs the intent again at `nonce` (which must be
   * above the stored one), with the same policy and token rules as a first
   * signature, and audits signature_replaced. Without it, or naming anything
   * but the stored signature, a signed intent gets its stored transaction.
   */
  replaces?: Hex
  /**
   * Set by the gateway when its own checks (preflight: nothing could be
   * simulated) require an operator's approval that the signer's policy
   * cannot see. It can only make signing stricter: the token is then
   * required and consumed as if the signer's policy had asked for it.
   */
  approvalRequired?: true
}

export interface SignResult {
  intentId: string
  txHash: Hex
  signedTx: Hex
  signerAddress: string
  nonce: number
  /** True when this intent had been signed before and the stored transaction is returned. */
  repeated: boolean
}

export interface GrantParams {
  txRequestHash: Hex
  /** keccak256(JCS(intent)) as the approver computed it; the signer recomputes it from the intent it is asked to sign. */
  intentHash: Hex
  intentId: string
  /**
   * The txHash of the lost transaction the operator approved replacing (the
   * request's `replacing`, shown on the card); absent for a first signature.
   * The token then authorises that replacement and nothing else.
   */
  replacing?: Hex
}

/**
 * grantApproval answers once the token is committed to signer.db, before the
 * fsync that makes it durable, so that the approver can commit its own
 * approval rows meanwhile; grantsDurable (no params, answers {}) resolves
 * once every token minted before it is on disk. A token is handed on only
 * after both: a power cut never leaves a caller holding a token the signer
 * lost. (It may leave approval_granted naming one that was never handed on,
 * when the approver's rows reach the disk first: such a token can authorise
 * nothing.)
 */
export interface GrantResult {
  approvalTokenId: string
  expiresAt: number
}

export interface AccountInfo {
  address: string
  label: string | null
  dev: boolean
  unlocked: boolean
  /** Where the key lives: an encrypted keystore file unlocked in memory, or a PKCS#11 token it never leaves. */
  backend: 'keystore' | 'pkcs11'
}

/** Every refusal is answered with SIGNING_REFUSED (errorCodes.ts); `data.reason` says which. */
export { SIGNING_REFUSED } from './errorCodes.js'

/** Reasons the signer refuses; the first five are SPEC's signing_denied reasons. */
export type SigningRefusal =
  | 'missing_policy_decision'
  | 'policy_deny'
  | 'missing_approval_token'
  | 'invalid_approval_token'
  | 'key_locked'
  | 'tx_mismatch'
  | 'gas_cost_exceeds_max'
  | 'intent_conflict'
  | 'dev_key_on_remote_chain'
  | 'key_unavailable'

export interface SigningRefusalData {
  reason: SigningRefusal
  /** Policy reason texts when reason is policy_deny. */
  reasons?: string[]
  txRequestHash?: string
}

export const signParamsSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['intent', 'txRequest', 'nonce', 'gas', 'maxFeePerGas', 'maxPriorityFeePerGas'],
  properties: {
    intent: txIntentSchema,
    txRequest: txRequestSchema,
    approvalTokenId: uuidSchema,
    replaces: txHashSchema,
    nonce: { type: 'integer', minimum: 0, maximum: 9007199254740991 },
    gas: amountSchema,
    maxFeePerGas: amountSchema,
    maxPriorityFeePerGas: amountSchema,
    approvalRequired: { const: true },
  },
} as const

export const grantParamsSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['txRequestHash', 'intentHash', 'intentId'],
  properties: {
    txRequestHash: txHashSchema,
    intentHash: txHashSchema,
    intentId: uuidSchema,
    replacing: txHashSchema,
  },
} as const

export const emptyParamsSchema = {
  anyOf: [
    { type: 'object', additionalProperties: false, properties: {} },
    { type: 'array', maxItems: 0 },
  ],
} as const
