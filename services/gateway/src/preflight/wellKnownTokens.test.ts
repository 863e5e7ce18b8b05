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
    for (const symbol of ['weth', ' WETH ', 'ＷＥＴＨ']) expect(lookalikeTokens(8453, [{ address: FAKE, symbol }])).toHaveLength(1)
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
