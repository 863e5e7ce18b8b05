import { uint256 } from '../builders/amounts.js'
import { chainName, formatNative } from '../builders/describe.js'
import type { TransferNativeAction } from '../types.js'
import { addressSchema, amountSchema } from './common.js'
import type { ActionSpec } from './spec.js'

/** A plain value transfer of the chain's native coin: no contract is called. */
export const transferNativeSpec: ActionSpec<TransferNativeAction> = {
  type: 'transfer_native',
  summary: "send an amount of the chain's native coin (ETH) to a recipient",
  schema: {
    type: 'object',
    additionalProperties: false,
    required: ['type', 'to', 'amount'],
    properties: { type: { const: 'transfer_native' }, to: addressSchema, amount: amountSchema },
  },
  usesSlippage: false,
  addresses: (a) => [['action.to', a.to]],
  mapAddresses: (a, f) => ({ ...a, to: f(a.to) }),
  build: (intent) => ({ to: intent.action.to, data: '0x', value: uint256(intent.action.amount, 'action.amount') }),
  contract: () => null,
  counterparties: (intent) => [{ role: 'recipient', address: intent.action.to, field: 'action.to' }],
  tokens: () => [],
  flows: (a) => [{ kind: 'outflow', asset: null, amount: BigInt(a.amount), bound: 'exact', field: 'action.amount' }],
  acquires: () => [],
  describe: (intent) => `Transfer ${formatNative(intent.action.amount)} (native) to ${intent.action.to} on ${chainName(intent.chain.chainId)}`,
  card: ({ action: a }) => [
    { label: 'Send', value: formatNative(a.amount), kind: 'amount' },
    { label: 'Recipient', value: a.to, kind: 'address' },
  ],
}
