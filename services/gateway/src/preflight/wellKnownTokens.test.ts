import { describe, expect, it } from 'vitest'
import { getAddress } from 'viem'
import { USDC_BASE, WETH_BASE } from '@countersign/shared/testing/intents'
import { lookalikeTokens, WELL_KNOWN_TOKENS } from './wellKnownTokens.js'

// The review's hostile token: symbol() "WETH" at an address that is not WETH's.
const FAKE = '0x5FbDB2315678afecb367f032d93F642f64180aa3'

describe('lookalikeTokens', () => {
  it('flags a token that reports a well-known symbol of the chain at another address, naming the real one', () => {
    expect(lookalikeTokens(8453, [{ address: FAKE, symbol: 'WETH' }])).toEqual([
      `token ${FAKE} reports the symbol WETH, but WETH on chain 8453 is ${WETH_BASE}: a lookalike token`,
    ])
  })

  it('does not flag the canonical tokens, in any spelling of their address', () => {
    expect(lookalikeTokens(8453, [{ address: WETH_BASE, symbol: 'WETH' }, { address: USDC_BASE.toLowerCase() as `0x${string}`, symbol: 'USDC' }])).toEqual([])
    for (const [chainId, symbols] of Object.entries(WELL_KNOWN_TOKENS)) {
      for (const [symbol, addresses] of Object.entries(symbols)) {
        expect(lookalikeTokens(Number(chainId), addresses.map((address) => ({ address, symbol })))).toEqual([])
      }
    }
  })

  it('compares symbols without case, spaces or compatibility forms', () => {
    for (const symbol of ['weth', ' WETH ', 'ＷＥＴＨ', 'W ETH', 'WE\u200bTH']) expect(lookalikeTokens(8453, [{ address: FAKE, symbol }])).toHaveLength(1)
    // Found by review: invisible characters outside the format class (Mongolian variation selectors, shorthand format controls).
    for (const symbol of ['WETH\u180b', 'WE\u180fTH', 'W\u{1bca0}ETH', 'WETH\u0007']) expect(lookalikeTokens(8453, [{ address: FAKE, symbol }]), symbol).toHaveLength(1)
  })

  it('reads letters of other scripts as the Latin letters they are drawn like, and names the symbol as written (found by review)', () => {
    // Cyrillic Е, Ѕ, С and Greek Τ: each passed as a plain ticker on a green card.
    expect(lookalikeTokens(8453, [{ address: FAKE, symbol: 'W\u0415TH' }])).toEqual([
      `token ${FAKE} reports the symbol "W\\u0415TH" (read as WETH), but WETH on chain 8453 is ${WETH_BASE}: a lookalike token`,
    ])
    for (const symbol of ['U\u0405DC', 'USD\u0421', 'WE\u03a4H', 'w\u0435th']) expect(lookalikeTokens(8453, [{ address: FAKE, symbol }]), symbol).toHaveLength(1)
  })

  // Found by review: "DAl" (lower-case L) showed as DAI on a green card, in the dashboard's font the same title.
  it('reads plain ASCII drawn like a ticker’s letters as those letters, and a bridged-looking suffix as the ticker', () => {
    expect(lookalikeTokens(8453, [{ address: FAKE, symbol: 'DAl' }])).toEqual([
      `token ${FAKE} reports the symbol "DAl" (read as DAI), but DAI on chain 8453 is 0x50c5725949A6F0c72E6C4a641F24049A917DB0Cb: a lookalike token`,
    ])
    for (const symbol of ['DA1', 'DA|', 'DA\u04c0', 'DA\u04cf', 'DA\u01c0', 'VVETH', 'vveth', 'U5DC', 'USDC.e', 'USDC-e', 'USDC_E', '$USDC', 'cbETH', 'CBETH.e']) {
      expect(lookalikeTokens(8453, [{ address: FAKE, symbol }]), symbol).toHaveLength(1)
    }
    expect(lookalikeTokens(1, [{ address: FAKE, symbol: 'U5DT' }])).toEqual([
      `token ${FAKE} reports the symbol "U5DT" (read as USDT), but USDT on chain 1 is 0xdAC17F958D2ee523a2206206994597C13D831ec7: a lookalike token`,
    ])
    // The real tokens, however their symbol is spelled, and other tickers, stay as they were.
    expect(lookalikeTokens(10, [{ address: '0x7F5c764cBc14f9669B88837ca1490cCa17c31607', symbol: 'USDC.e' }])).toEqual([])
    expect(lookalikeTokens(8453, [{ address: FAKE, symbol: 'TUSD' }, { address: FAKE, symbol: 'LINK' }, { address: FAKE, symbol: 'stETH' }, { address: FAKE, symbol: 'DAO' }])).toEqual([])
    // Tokens of their own whose symbol extends a ticker (second review: they were flagged).
    for (const symbol of ['ETH+', 'DAI+', 'USDC+', 'ETH-USDC LP', 'WETH.LP']) expect(lookalikeTokens(8453, [{ address: FAKE, symbol }]), symbol).toEqual([])
  })

  it('flags any token whose symbol reads as the chain’s own coin: no ERC-20 token is ETH', () => {
    for (const symbol of ['ETH', 'eth', '\u0415TH']) {
      expect(lookalikeTokens(8453, [{ address: FAKE, symbol }])).toEqual([expect.stringMatching(new RegExp(`^token ${FAKE} reports the symbol .*, the name of chain 8453's own coin, which is not an ERC-20 token: a lookalike token$`))])
    }
    expect(lookalikeTokens(1, [{ address: WETH_BASE, symbol: 'ETH' }])).toHaveLength(1)
    expect(lookalikeTokens(8453, [{ address: FAKE, symbol: 'stETH' }, { address: FAKE, symbol: 'ETHX' }])).toEqual([])
  })

  it('leaves symbols alone that the chain does not list, and tokens without a symbol', () => {
    expect(lookalikeTokens(8453, [{ address: FAKE, symbol: 'TUSD' }, { address: FAKE, symbol: null }, { address: FAKE, symbol: 'USDT' }])).toEqual([])
    expect(lookalikeTokens(1, [{ address: FAKE, symbol: 'USDT' }])).toHaveLength(1)
  })

  it('counts an address the deployment says is the real one (the router’s WETH9 on the dev chain) as canonical', () => {
    expect(lookalikeTokens(8453, [{ address: FAKE, symbol: 'WETH' }], { WETH: FAKE })).toEqual([])
    expect(lookalikeTokens(8453, [{ address: FAKE, symbol: 'USDC' }], { WETH: FAKE })).toHaveLength(1)
  })

  it('lists only EIP-55 checksummed addresses (a typo in the table would flag the real token)', () => {
    for (const symbols of Object.values(WELL_KNOWN_TOKENS)) for (const addresses of Object.values(symbols)) for (const a of addresses) expect(getAddress(a)).toBe(a)
  })
})
