import { erc20Abi, type Address, type PublicClient } from 'viem'

const WETH9_ABI = [{ type: 'function', name: 'WETH9', stateMutability: 'view', inputs: [], outputs: [{ name: '', type: 'address' }] }] as const

export interface TokenFacts {
  hasCode: boolean
  symbol: string | null
  decimals: number | null
}

/**
 * Chain constants a preflight needs, cached per chain and address: token
 * symbol and decimals never change, and code once present stays. Absence of
 * code is not cached (a contract may be deployed there later).
 */
export class ChainFacts {
  private readonly tokens = new Map<string, Promise<TokenFacts>>()
  private readonly code = new Map<string, true>()
  private readonly weth = new Map<string, Address>()

  async hasCode(client: PublicClient, chainId: number, address: Address): Promise<boolean> {
    const key = `${chainId}:${address.toLowerCase()}`
    if (this.code.has(key)) return true
    const code = await client.getCode({ address })
    const present = !!code && code !== '0x'
    if (present) this.code.set(key, true)
    return present
  }

  /**
   * The WETH9 a SwapRouter02 wraps (its WETH9() getter): the real WETH of
   * that Uniswap deployment. On the public chains it is the chain's WETH; on
   * a local deployment (the dev chain) it is the one deployed with the
   * router. Null when the router does not answer (not cached: asked again).
   */
  async routerWeth(client: PublicClient, chainId: number, router: Address): Promise<Address | null> {
    const key = `${chainId}:${router.toLowerCase()}`
    const known = this.weth.get(key)
    if (known) return known
    const weth = await client.readContract({ address: router, abi: WETH9_ABI, functionName: 'WETH9' }).catch(() => null)
    if (typeof weth !== 'string') return null
    this.weth.set(key, weth)
    return weth
  }

  /** Drops what was learnt of a chain whose endpoint was found answering another chain (its facts may be that chain's). */
  forget(chainId: number): void {
    const prefix = `${chainId}:`
    for (const map of [this.tokens, this.code, this.weth] as Array<Map<string, unknown>>) {
      for (const key of [...map.keys()]) if (key.startsWith(prefix)) map.delete(key)
    }
  }

  token(client: PublicClient, chainId: number, address: Address): Promise<TokenFacts> {
    const key = `${chainId}:${address.toLowerCase()}`
    const cached = this.tokens.get(key)
    if (cached) return cached
    const lookup = (async (): Promise<TokenFacts> => {
      if (!(await this.hasCode(client, chainId, address))) return { hasCode: false, symbol: null, decimals: null }
      const [symbol, decimals] = await Promise.all([
        client.readContract({ address, abi: erc20Abi, functionName: 'symbol' }).catch(() => null),
        client.readContract({ address, abi: erc20Abi, functionName: 'decimals' }).catch(() => null),
      ])
      return { hasCode: true, symbol: typeof symbol === 'string' ? clippedSymbol(symbol) : null, decimals: isUint8(decimals) ? decimals : null }
    })()
    this.tokens.set(key, lookup)
    // Only a token with code and decimals is a constant worth keeping; a failed lookup is retried next time.
    // Decimals that did not come back may be a node's blip as much as a contract without decimals(), and a
    // token without them needs an operator (riskScore token_without_decimals): asked again, not kept.
    lookup.then(
      (f) => {
        if (!f.hasCode || f.decimals === null) this.tokens.delete(key)
      },
      () => this.tokens.delete(key),
    )
    return lookup
  }
}

/** Longer than any ticker: what is kept of a symbol() answer (a node's answer may be megabytes). */
export const MAX_SYMBOL_LENGTH = 64

/**
 * A token's symbol() is the contract's to choose, and an answer of megabytes
 * fits in a node's reply: kept whole, it was cached for the life of the
 * gateway and copied into every mismatch line, risk factor and audit event
 * that names it (seen by review). Longer than MAX_SYMBOL_LENGTH it is cut,
 * and says so with "…" (no ticker that long is shown anyway).
 */
export function clippedSymbol(symbol: string): string {
  if (symbol.length <= MAX_SYMBOL_LENGTH) return symbol
  let kept = ''
  // By code point, so that a pair of surrogates is never split.
  for (const c of symbol) {
    if (kept.length + c.length > MAX_SYMBOL_LENGTH - 1) break
    kept += c
  }
  return `${kept}…`
}

/**
 * ERC-20's decimals() is a uint8, but viem hands back whatever number the
 * contract's 32 bytes hold. A contract that answers 100000 made formatting an
 * amount (the description, before policy ran) block the event loop for
 * seconds (found by review): such an answer is no decimals at all.
 */
function isUint8(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 255
}
