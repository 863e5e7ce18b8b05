import { formatUnits } from 'viem'
import type { Asset } from '../types.js'

const CHAIN_NAMES: Record<number, string> = { 1: 'Ethereum', 10: 'Optimism', 42161: 'Arbitrum One', 8453: 'Base' }

export function chainName(chainId: number): string {
  return CHAIN_NAMES[chainId] ?? `chain ${chainId}`
}

/**
 * A symbol is the token's (or the client's) own text shown to an operator.
 * One with spaces, control characters or an address-like "0x" could make a
 * description say something it does not ("USDC to 0xTrusted…"), and one with
 * letters of another script could pass for a ticker it is not ("WЕTH" with a
 * Cyrillic Е read as WETH on a green card; found by review), so only a plain
 * ASCII ticker is shown; anything else is left out and the token address
 * speaks instead (the gateway's preflight names such a symbol, escaped, when
 * it reads as a well-known one).
 */
export function displayableSymbol(symbol: string | undefined): string | undefined {
  if (symbol === undefined) return undefined
  if (!/^[A-Za-z0-9$._+\-]{1,32}$/.test(symbol)) return undefined
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
