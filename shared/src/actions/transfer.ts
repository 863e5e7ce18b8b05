import { chainName, formatAssetAmount } from '../builders/describe.js'
import { erc20TransferData } from '../builders/erc20.js'
import type { TransferAction } from '../types.js'
import { addressSchema, amountSchema, assetSchema, mapAsset } from './common.js'
import type { ActionSpec } from './spec.js'

/** ERC-20 `transfer(to, amount)` on the token: `amount` leaves the wallet for `to`. */
export const transferSpec: ActionSpec<TransferAction> = {
  type: 'transfer',
  summary: 'send an amount of an ERC-20 token to a recipient',
  schema: {
    type: 'object',
    additionalProperties: false,
    required: ['type', 'asset', 'to', 'amount'],
    properties: { type: { const: 'transfer' }, asset: assetSchema, to: addressSchema, amount: amountSchema },
  },
  usesSlippage: false,
  addresses: (a) => [
    ['action.asset.address', a.asset.address],
    ['action.to', a.to],
  ],
  mapAddresses: (a, f) => ({ ...a, asset: mapAsset(a.asset, f), to: f(a.to) }),
  build: (intent) => ({ to: intent.action.asset.address, data: erc20TransferData(intent.action), value: 0n }),
  contract: (intent) => intent.action.asset.address,
  counterparties: (intent) => [{ role: 'recipient', address: intent.action.to, field: 'action.to' }],
  tokens: (a) => [a.asset],
  flows: (a) => [{ kind: 'outflow', asset: a.asset, amount: BigInt(a.amount), bound: 'exact', field: 'action.amount' }],
  acquires: () => [],
  describe: (intent) =>
    `Transfer ${formatAssetAmount(intent.action.amount, intent.action.asset)} to ${intent.action.to} on ${chainName(intent.chain.chainId)}`,
  card: ({ action: a }) => [
    { label: 'Send', value: formatAssetAmount(a.amount, a.asset), kind: 'amount' },
    { label: 'Token', value: a.asset.address, kind: 'address' },
    { label: 'Recipient', value: a.to, kind: 'address' },
  ],
}
