import type { Asset, TxIntent } from '../../types.js'
import type { TokenFact } from '../../protocol/approver.js'
import { displayableSymbol } from '../../builders/describe.js'

export type { TokenFact }

/** A declared symbol or decimals that the chain contradicts. */
export interface TokenMismatch {
  address: string
  declared: { symbol?: string; decimals?: number }
  onChain: { symbol: string | null; decimals: number | null }
}

/** The mismatch between what the client declared for a token and what the chain says, or null when they agree (or nothing was declared). */
export function mismatchOf(asset: Asset, fact: TokenFact): TokenMismatch | null {
  // A declared value the chain does not confirm (another value, or none at all) is a mismatch.
  const symbolDiffers = asset.symbol !== undefined && asset.symbol !== fact.symbol
  const decimalsDiffer = asset.decimals !== undefined && asset.decimals !== fact.decimals
  if (!symbolDiffers && !decimalsDiffer) return null
  return {
    address: asset.address,
    declared: { ...(asset.symbol !== undefined ? { symbol: asset.symbol } : {}), ...(asset.decimals !== undefined ? { decimals: asset.decimals } : {}) },
    onChain: { symbol: fact.symbol, decimals: fact.decimals },
  }
}

const isAsset = (v: unknown): v is Asset => typeof v === 'object' && v !== null && (v as Asset).kind === 'erc20' && typeof (v as Asset).address === 'string'

/**
 * The intent as it should be shown when the chain's facts are known: every
 * asset's symbol and decimals replaced by the token's own (DESIGN §6 "what
 * the card shows"); a fact the chain did not give is dropped rather than
 * taken from the client, so the amount shows in raw units. A token the chain
 * gave no facts for at all (its lookup failed or timed out) is shown the same
 * way, by address in raw units, and listed in `unread`: before, it kept the
 * client's declared symbol and decimals on a card marked as checked, so 10^12
 * units of a 6-decimals token declared with 18 read "0.000001" (found by
 * review). Only for display: never built, hashed or signed. Assets are the
 * action's `erc20` members.
 */
export function applyTokenFacts(intent: TxIntent, facts: readonly TokenFact[]): { shown: TxIntent; mismatches: TokenMismatch[]; unread: string[] } {
  const byAddress = new Map(facts.map((f) => [f.address.toLowerCase(), f]))
  const mismatches: TokenMismatch[] = []
  const unread: string[] = []
  const action: Record<string, unknown> = { ...intent.action }
  let changed = false
  for (const [key, value] of Object.entries(action)) {
    if (!isAsset(value)) continue
    const fact = byAddress.get(value.address.toLowerCase())
    const asset: Asset = { kind: 'erc20', address: value.address }
    if (!fact) {
      if (!unread.some((a) => a.toLowerCase() === value.address.toLowerCase())) unread.push(value.address)
    } else {
      const mismatch = mismatchOf(value, fact)
      if (mismatch) mismatches.push(mismatch)
      if (fact.symbol !== null) asset.symbol = fact.symbol
      if (fact.decimals !== null) asset.decimals = fact.decimals
    }
    action[key] = asset
    changed = true
  }
  // Same asset twice (a swap of a token into itself): one mismatch is enough.
  const unique = mismatches.filter((m, i) => mismatches.findIndex((n) => n.address.toLowerCase() === m.address.toLowerCase()) === i)
  return { shown: changed ? ({ ...intent, action: action as unknown as TxIntent['action'] }) : intent, mismatches: unique, unread }
}

/**
 * A symbol as a JSON string with every character but printable ASCII as its
 * escape (astral ones as `\u{…}`), like the gateway's lookalike warning
 * (`symbolAsWritten`, which shared may not import): a quote inside it is
 * `\"`, so it cannot end the quotes and go on in the sentence around it,
 * and a letter of another script shows as what it is (`W\u0415TH`).
 * escapeJsonForDisplay would leave such letters as they are.
 */
function symbolAsWritten(symbol: string): string {
  return JSON.stringify(symbol).replace(/[^\x20-\x7e]/gu, (c) => {
    const cp = c.codePointAt(0)!
    return cp > 0xffff ? `\\u{${cp.toString(16)}}` : `\\u${cp.toString(16).padStart(4, '0')}`
  })
}

/**
 * A symbol that came from outside (`whose`: the client's declaration, or the
 * token's own symbol()) inside the system's sentence. Found by review: a
 * declared symbol was quoted as it was, so `USDC" (checked, safe); "` read
 * as the system's own words inside the red alert. Only a plain ticker
 * (displayableSymbol) is shown as it is; anything else is said to be not
 * one, and is shown escaped and named as whose text it is.
 */
function quotedSymbol(symbol: string, whose: string): string {
  if (displayableSymbol(symbol) === symbol) return `"${symbol}"`
  return `a symbol that is not a plain ticker (${whose} text, escaped: ${symbolAsWritten(symbol)})`
}

/** One sentence for the operator (and the risk factor's detail). */
export function describeMismatch(m: TokenMismatch): string {
  const declared = [m.declared.symbol !== undefined ? quotedSymbol(m.declared.symbol, "the client's") : null, m.declared.decimals !== undefined ? `${m.declared.decimals} decimals` : null].filter(Boolean).join(' with ')
  const chain = [m.onChain.symbol !== null ? quotedSymbol(m.onChain.symbol, "the token's own") : 'no symbol', m.onChain.decimals !== null ? `${m.onChain.decimals} decimals` : 'unknown decimals'].join(' with ')
  return `the client declared token ${m.address} as ${declared}; on chain it is ${chain}`
}
