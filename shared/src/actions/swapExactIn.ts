import { chainName, formatAssetAmount } from '../builders/describe.js'
import type { SwapExactInAction } from '../types.js'
import { addressSchema, amountSchema, assetSchema, providerSchema } from './common.js'
import type { ActionSpec } from './spec.js'
import { swapCardFields, swapSpecParts, swapVia } from './swapCommon.js'

/** Sell exactly `amountIn` of assetIn for at least `minAmountOut` of assetOut; proceeds to the wallet. */
export const swapExactInSpec: ActionSpec<SwapExactInAction> = {
  type: 'swap_exact_in',
  summary: 'sell an exact amount of one ERC-20 for at least a minimum of another, proceeds to the wallet',
  schema: {
    type: 'object',
    additionalProperties: false,
    required: ['type', 'router', 'assetIn', 'assetOut', 'amountIn', 'minAmountOut'],
    properties: {
      type: { const: 'swap_exact_in' },
      router: addressSchema,
      provider: providerSchema,
      assetIn: assetSchema,
      assetOut: assetSchema,
      amountIn: amountSchema,
      minAmountOut: amountSchema,
    },
  },
  ...swapSpecParts,
  flows: (a) => [{ kind: 'outflow', asset: a.assetIn, amount: BigInt(a.amountIn), bound: 'exact', field: 'action.amountIn' }],
  describe: ({ action: a, chain }, route) =>
    `Swap ${formatAssetAmount(a.amountIn, a.assetIn)} for at least ${formatAssetAmount(a.minAmountOut, a.assetOut)} on ${chainName(chain.chainId)} (${swapVia(route)})`,
  card: (intent, tx) => [
    { label: 'Sell', value: formatAssetAmount(intent.action.amountIn, intent.action.assetIn), kind: 'amount' },
    { label: 'Buy at least', value: formatAssetAmount(intent.action.minAmountOut, intent.action.assetOut), kind: 'amount' },
    ...swapCardFields(intent, tx),
  ],
}
