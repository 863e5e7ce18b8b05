import { chainName, formatAssetAmount } from '../builders/describe.js'
import { erc20ApproveData } from '../builders/erc20.js'
import type { ApproveAction } from '../types.js'
import { addressSchema, amountSchema, assetSchema, mapAsset } from './common.js'
import type { ActionSpec } from './spec.js'

/**
 * An approval at or above 2^96 - 1 is "unlimited". Wallets and dapps send
 * 2^256-1 (or near it) to mean "forever, any amount", and tokens such as UNI
 * and COMP take their own uint96 maximum as "never decremented": an allowance
 * of 2^96 - 1 there is literally unlimited. DESIGN.md drew the line at 2^255,
 * which let 2^255 - 1, or the uint96 maximum, through without a human
 * (docs/operations.md). A real approval this large (a whole balance of a
 * token with a vast supply) is asked about, which is the safe side.
 */
export const UNLIMITED_APPROVAL = (1n << 96n) - 1n

export const isUnlimitedApproval = (amount: bigint): boolean => amount >= UNLIMITED_APPROVAL

/** What an allowance amount means, in words. */
function allowanceText(a: ApproveAction): string {
  return isUnlimitedApproval(BigInt(a.amount)) ? `an unlimited amount of token ${a.asset.address}` : formatAssetAmount(a.amount, a.asset)
}

/**
 * ERC-20 `approve(spender, amount)` on the token. Nothing leaves the wallet
 * now, but the spender may take up to `amount` at any later time: for policy
 * it is an outflow to the spender.
 */
export const approveSpec: ActionSpec<ApproveAction> = {
  type: 'approve',
  summary: 'let a spender move up to an amount of an ERC-20 token from the wallet',
  schema: {
    type: 'object',
    additionalProperties: false,
    required: ['type', 'asset', 'spender', 'amount'],
    properties: { type: { const: 'approve' }, asset: assetSchema, spender: addressSchema, amount: amountSchema },
  },
  usesSlippage: false,
  addresses: (a) => [
    ['action.asset.address', a.asset.address],
    ['action.spender', a.spender],
  ],
  mapAddresses: (a, f) => ({ ...a, asset: mapAsset(a.asset, f), spender: f(a.spender) }),
  build: (intent) => ({ to: intent.action.asset.address, data: erc20ApproveData(intent.action), value: 0n }),
  contract: (intent) => intent.action.asset.address,
  counterparties: (intent) => [{ role: 'spender', address: intent.action.spender, field: 'action.spender' }],
  tokens: (a) => [a.asset],
  flows: (a) => [
    { kind: 'allowance', asset: a.asset, amount: BigInt(a.amount), bound: 'at_most', field: 'action.amount', spender: a.spender },
  ],
  acquires: () => [],
  describe: (intent) => `Approve ${intent.action.spender} to spend ${allowanceText(intent.action)} on ${chainName(intent.chain.chainId)}`,
  card: ({ action: a }) => [
    { label: 'Allow to spend', value: allowanceText(a), kind: 'amount' },
    { label: 'Token', value: a.asset.address, kind: 'address' },
    { label: 'Spender', value: a.spender, kind: 'address' },
  ],
}
