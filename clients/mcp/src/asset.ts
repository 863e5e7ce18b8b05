// A tool's token arguments as the intent's asset object: the symbol and
// decimals a model passes are optional and only ever displayed (the service
// reads the chain's own).
import type { Address, Asset } from '@countersign/client'

export function assetOf(address: string, symbol: string | undefined, decimals: number | undefined): Asset {
  return {
    kind: 'erc20',
    address: address as Address,
    ...(symbol ? { symbol } : {}),
    ...(decimals !== undefined ? { decimals } : {}),
  }
}
