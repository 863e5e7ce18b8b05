import { formatUnits } from 'viem'
import type { Asset } from '../types.js'

const CHAIN_NAMES: Record<number, string> = { 1: 'Ethereum', 10: 'Optimism', 42161: 'Arbitrum One', 8453: 'Base' }

export function chainName(chainId: number): string {
  return CHAIN_NAMES[chainId] ?? `chain ${chainId}`
}

/**
 * A declared symbol is client text shown to an operator. One with spaces,
 * control characters or an address-like "0x" could make a description say
 * something it does not ("USDC to 0xTrusted…"), so only a plain ticker is
 * shown; anything else is left out and the token address speaks instead.
 */
export function displayableSymbol(symbol: string | undefined): string | undefined {
  if (symbol === undefined) return undefined
  if (!/^[\p{L}\p{N}\p{Sc}._+\-]{1,32}$/u.test(symbol)) return undefined
  if (/^0x/i.test(symbol)) return undefined
  return symbol
}

/** An amount in words: scaled by the asset's decimals when known, raw units otherwise. */
export function formatAssetAmount(amount: string, asset: Pick<Asset, 'address' | 'symbol' | 'decimals'>): string {
  const symbol = displayableSymbol(asset.symbol)
  // Decimals no ERC-20 can have (uint8) are not scaled by: viem's formatting takes time quadratic in them.
  if (asset.decimals !== undefined && !(Number.isInteger(asset.decimals) && asset.decimals >= 0 && asset.decimals <= 255)) return `${amount} units of token ${asset.address}`
  if (asset.decimals !== undefined && symbol) return `${formatUnits(BigInt(amount), asset.decimals)} ${symbol}`
  if (asset.decimals !== undefined) return `${formatUnits(BigInt(amount), asset.decimals)} of token ${asset.address}`
  return `${amount} units of token ${asset.address}`
}

export function formatNative(amountWei: string): string {
  return `${formatUnits(BigInt(amountWei), 18)} ETH`
}
