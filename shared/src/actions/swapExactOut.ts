import { chainName, formatAssetAmount } from '../builders/describe.js'
import type { SwapExactOutAction } from '../types.js'
import { addressSchema, amountSchema, assetSchema, providerSchema } from './common.js'
import type { ActionSpec } from './spec.js'
import { swapCardFields, swapSpecParts, swapVia } from './swapCommon.js'

/** Buy exactly `amountOut` of assetOut for at most `maxAmountIn` of assetIn; proceeds to the wallet. */
export const swapExactOutSpec: ActionSpec<SwapExactOutAction> = {
  type: 'swap_exact_out',
  summary: 'buy an exact amount of one ERC-20 for at most a maximum of another, proceeds to the wallet',
  schema: {
    type: 'object',
    additionalProperties: false,
    required: ['type', 'router', 'assetIn', 'assetOut', 'amountOut', 'maxAmountIn'],
    properties: {
      type: { const: 'swap_exact_out' },
      router: addressSchema,
      provider: providerSchema,
      assetIn: assetSchema,
      assetOut: assetSchema,
      amountOut: amountSchema,
      maxAmountIn: amountSchema,
    },
  },
  ...swapSpecParts,
  flows: (a) => [{ kind: 'outflow', asset: a.assetIn, amount: BigInt(a.maxAmountIn), bound: 'at_most', field: 'action.maxAmountIn' }],
  describe: ({ action: a, chain }, route) =>
    `Swap at most ${formatAssetAmount(a.maxAmountIn, a.assetIn)} for exactly ${formatAssetAmount(a.amountOut, a.assetOut)} on ${chainName(chain.chainId)} (${swapVia(route)})`,
  card: (intent, tx) => [
    { label: 'Sell at most', value: formatAssetAmount(intent.action.maxAmountIn, intent.action.assetIn), kind: 'amount' },
    { label: 'Buy exactly', value: formatAssetAmount(intent.action.amountOut, intent.action.assetOut), kind: 'amount' },
    ...swapCardFields(intent, tx),
  ],
}
