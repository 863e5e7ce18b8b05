import { addressSchema, amountSchema } from '../schemas/formats.js'
import type { Asset, Address } from '../types.js'

export const assetSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['kind', 'address'],
  properties: {
    kind: { const: 'erc20' },
    address: addressSchema,
    symbol: { type: 'string', minLength: 1, maxLength: 32 },
    decimals: { type: 'integer', minimum: 0, maximum: 36 },
  },
} as const

// uniswap_v3 and 1inch: other clients' names for v3_router and aggregator (actions/providers.ts).
export const providerSchema = { type: 'string', enum: ['v3_router', 'aggregator', 'uniswap_v3', '1inch'] } as const

export { addressSchema, amountSchema }

/** The asset with its address passed through `f`. */
export const mapAsset = (asset: Asset, f: (a: Address) => Address): Asset => ({ ...asset, address: f(asset.address) })
