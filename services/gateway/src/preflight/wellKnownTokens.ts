// Well-known tokens per supported chain: the addresses that really are
// "WETH", "USDC", ... there. A token's symbol() is whatever its contract
// says; anyone can deploy a token that says "WETH", seed a pool for it and
// have the approval card read "Buy at least 0.3 WETH". The card names every
// token by address, and a token that claims a well-known symbol at any other
// address is a risk factor (lookalike_token_symbol) that needs an operator.
//
// Only symbols listed for a chain are checked there, and only with addresses
// we are sure of (a wrong entry would flag the real token): on Base there is
// no USDT entry, so a "USDT" on Base is not flagged. Bridged variants that
// still report the plain symbol on some explorers (USDC.e on Optimism and
// Arbitrum) are listed as canonical too.
import type { Address } from '@countersign/shared'

export const WELL_KNOWN_TOKENS: Readonly<Record<number, Readonly<Record<string, readonly Address[]>>>> = {
  1: {
    WETH: ['0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2'],
    USDC: ['0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48'],
    USDT: ['0xdAC17F958D2ee523a2206206994597C13D831ec7'],
    DAI: ['0x6B175474E89094C44Da98b954EedeAC495271d0F'],
    WBTC: ['0x2260FAC5E5542a773Aa44fBCfeDf7C193bc2C599'],
  },
  10: {
    WETH: ['0x4200000000000000000000000000000000000006'],
    USDC: ['0x0b2C639c533813f4Aa9D7837CAf62653d097Ff85', '0x7F5c764cBc14f9669B88837ca1490cCa17c31607'],
    USDT: ['0x94b008aA00579c1307B0EF2c499aD98a8ce58e58'],
    DAI: ['0xDA10009cBd5D07dd0CeCc66161FC93D7c9000da1'],
    WBTC: ['0x68f180fcCe6836688e9084f035309E29Bf0A2095'],
  },
  42161: {
    WETH: ['0x82aF49447D8a07e3bd95BD0d56f35241523fBab1'],
    USDC: ['0xaf88d065e77c8cC2239327C5EDb3A432268e5831', '0xFF970A61A04b1cA14834A43f5dE4533eBDDB5CC8'],
    USDT: ['0xFd086bC7CD5C481DCC9C85ebE478A1C0b69FCbb9'],
    DAI: ['0xDA10009cBd5D07dd0CeCc66161FC93D7c9000da1'],
    WBTC: ['0x2f2a2543B76A4166549F7aaB2e75Bef0aefC5B0f'],
  },
  8453: {
    WETH: ['0x4200000000000000000000000000000000000006'],
    USDC: ['0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913'],
    DAI: ['0x50c5725949A6F0c72E6C4a641F24049A917DB0Cb'],
    CBETH: ['0x2Ae3F1Ec7F1F5012CFEab0185bfc7aa3cf0DEc22'],
  },
}

/**
 * Letters of other scripts drawn like Latin ones (Cyrillic, Greek), by the
 * Latin letter they pass for: the letters a "WЕTH" or "UЅDC" is made of.
 * Enough for the tickers listed above and the native coin's; not all of
 * Unicode's confusables.
 */
const LATIN_LOOKALIKES: Readonly<Record<string, string>> = Object.fromEntries(
  [
    ['АаΑα', 'A'], ['ВвΒβ', 'B'], ['СсϹϲ', 'C'], ['ԀԁᎠ', 'D'], ['ЕеΕε', 'E'], ['НнΗ', 'H'], ['ІіΙιӀӏǀƖɩ', 'I'], ['ЈјͿ', 'J'],
    ['КкΚκ', 'K'], ['МмΜ', 'M'], ['Ν', 'N'], ['ОоΟο', 'O'], ['РрΡρ', 'P'], ['Ԛԛ', 'Q'], ['ЅѕϨ', 'S'], ['ТтΤτ', 'T'],
    ['ԜԝѠ', 'W'], ['ХхΧχ', 'X'], ['УуҮүΥ', 'Y'], ['Ζ', 'Z'],
  ].flatMap(([letters, latin]) => [...letters!].map((c) => [c, latin!])),
)

/**
 * How symbols are compared: case, spaces and invisible characters (format
 * characters and every default-ignorable code point, the Mongolian variation
 * selectors among them) ignored,
 * compatibility forms folded (a fullwidth "ＷＥＴＨ" is "WETH"), and letters of
 * other scripts read as the Latin letters they are drawn like (a Cyrillic
 * "Е" is "E"). Before, only exact tickers were compared, and "WЕTH" with a
 * Cyrillic Е passed as a plain ticker on a green card (found by review).
 */
export const symbolKey = (symbol: string): string =>
  [...symbol.normalize('NFKC').replace(/[\s\p{Cc}\p{Cf}\p{Z}\p{Default_Ignorable_Code_Point}]/gu, '')].map((c) => LATIN_LOOKALIKES[c] ?? c).join('').toUpperCase()

/**
 * Plain ASCII drawn like the letters of a ticker, in the case they pass in:
 * lower-case l, the digit 1 and | for I, 0 for O, 5 for S, "vv" for W, "rn"
 * for m, "cl" for d. Found by review: "DAl" (a lower-case L) and "VVETH"
 * showed on a green card as DAI and WETH, since only other scripts' letters
 * were folded.
 */
const ASCII_LOOKALIKES: ReadonlyArray<readonly [RegExp, string]> = [
  [/vv/gi, 'W'], [/rn/g, 'm'], [/cl/g, 'd'], [/[l1|]/g, 'I'], [/0/g, 'O'], [/5/g, 'S'],
]

/**
 * The ticker a symbol can pass for: symbolKey with ASCII look-alikes folded
 * (ASCII_LOOKALIKES), leading signs ("$WETH") dropped, and a bridged token's
 * ".e" suffix cut off, so that a bridged-looking "USDC.e" on a chain whose
 * list has no such token reads as the USDC it is not. Other suffixes stay:
 * "ETH+", "USDC+" and LP symbols are tokens of their own (second review), and
 * the card shows their suffix.
 */
export const tickerKey = (symbol: string): string => {
  const folded = ASCII_LOOKALIKES.reduce((s, [pattern, letter]) => s.replace(pattern, letter), symbol.normalize('NFKC'))
  return symbolKey(folded).replace(/^[^A-Z0-9]+/, '').replace(/[._-]E$/, '')
}

/** The chains' own coins: no ERC-20 token is one, so a token whose symbol reads as one is a lookalike wherever it is. */
const NATIVE_SYMBOLS: Readonly<Record<number, string>> = { 1: 'ETH', 10: 'ETH', 42161: 'ETH', 8453: 'ETH' }

/** The well-known symbol a chain lists for this token's reported symbol, or null. */
export function wellKnownSymbol(chainId: number, symbol: string | null): string | null {
  if (symbol === null) return null
  const key = tickerKey(symbol)
  return WELL_KNOWN_TOKENS[chainId]?.[key] ? key : null
}

export interface ReportedToken {
  address: Address
  /** What the token's symbol() says on chain. */
  symbol: string | null
}

/** A reported symbol as the operator should read it: any character outside printable ASCII as \uXXXX, so a Cyrillic letter cannot pass for a Latin one. */
export const symbolAsWritten = (symbol: string): string =>
  JSON.stringify(symbol).replace(/[^\x20-\x7e]/gu, (c) => [...c].map((u) => `\\u${u.codePointAt(0)!.toString(16).padStart(4, '0')}`).join(''))

/**
 * One sentence per token that reports a well-known symbol of this chain but
 * is not at any of its addresses, or whose symbol reads as the chain's own
 * coin. `alsoCanonical` adds addresses that are the real thing on this
 * deployment: the WETH9 the configured v3 router wraps (the dev chain uses
 * Base's chain id with its own WETH9, deployed elsewhere).
 */
export function lookalikeTokens(chainId: number, tokens: ReportedToken[], alsoCanonical: Readonly<Record<string, Address | null>> = {}): string[] {
  return tokens.flatMap((t) => {
    if (t.symbol === null) return []
    const key = tickerKey(t.symbol)
    const written = key === t.symbol ? key : `${symbolAsWritten(t.symbol)} (read as ${key})`
    if (NATIVE_SYMBOLS[chainId] === key) return [`token ${t.address} reports the symbol ${written}, the name of chain ${chainId}'s own coin, which is not an ERC-20 token: a lookalike token`]
    if (!WELL_KNOWN_TOKENS[chainId]?.[key]) return []
    const canonical = [...WELL_KNOWN_TOKENS[chainId]![key]!, ...(alsoCanonical[key] ? [alsoCanonical[key]!] : [])]
    if (canonical.some((a) => a.toLowerCase() === t.address.toLowerCase())) return []
    return [`token ${t.address} reports the symbol ${written}, but ${key} on chain ${chainId} is ${canonical.join(' or ')}: a lookalike token`]
  })
}
