import { describe, expect, it } from 'vitest'
import { actions, makeIntent, USDC_BASE, WETH_BASE } from '../testing/intents.js'
import { describeIntent } from '../../actions/index.js'
import { applyTokenFacts, describeMismatch } from './tokenFacts.js'

const TUSD = USDC_BASE

describe('applyTokenFacts', () => {
  it('shows the chain’s symbol and decimals instead of the declared ones, and lists the mismatch', () => {
    // 90 TUSD (18 decimals) declared as USDC with 12 decimals: the spoof.
    const intent = makeIntent({ action: { type: 'transfer', asset: { kind: 'erc20', address: TUSD, symbol: 'USDC', decimals: 12 }, to: '0x2222222222222222222222222222222222222222', amount: '90000000000000000000' } })
    expect(describeIntent(intent)).toContain('90000000 USDC')
    const { shown, mismatches } = applyTokenFacts(intent, [{ address: TUSD.toLowerCase(), symbol: 'TUSD', decimals: 18 }])
    expect(describeIntent(shown)).toContain('Transfer 90 TUSD to 0x2222222222222222222222222222222222222222')
    expect(mismatches).toEqual([{ address: TUSD, declared: { symbol: 'USDC', decimals: 12 }, onChain: { symbol: 'TUSD', decimals: 18 } }])
    expect(describeMismatch(mismatches[0]!)).toBe(`the client declared token ${TUSD} as "USDC" with 12 decimals; on chain it is "TUSD" with 18 decimals`)
    // The intent itself is untouched (it is what gets built, hashed and signed).
    expect(intent.action).toMatchObject({ asset: { symbol: 'USDC', decimals: 12 } })
  })

  it('no mismatch when the declared values agree or are absent; a fact the chain lacks is not taken from the client', () => {
    const agrees = makeIntent({ action: actions.transfer() })
    expect(applyTokenFacts(agrees, [{ address: USDC_BASE, symbol: 'USDC', decimals: 6 }]).mismatches).toEqual([])
    const bare = makeIntent({ action: { type: 'transfer', asset: { kind: 'erc20', address: USDC_BASE }, to: '0x2222222222222222222222222222222222222222', amount: '5000000' } })
    expect(describeIntent(applyTokenFacts(bare, [{ address: USDC_BASE, symbol: 'USDC', decimals: 6 }]).shown)).toContain('5 USDC')
    const noSymbol = applyTokenFacts(agrees, [{ address: USDC_BASE, symbol: null, decimals: 6 }])
    expect(describeIntent(noSymbol.shown)).toContain(`5 of token ${USDC_BASE}`)
    expect(noSymbol.mismatches).toHaveLength(1)
  })

  it('covers both assets of a swap; a token the chain gave no facts for shows in raw units, never as declared, and is listed unread', () => {
    const swap = makeIntent({ action: actions.swapIn() })
    const { shown, mismatches, unread } = applyTokenFacts(swap, [{ address: WETH_BASE, symbol: 'WETH', decimals: 8 }])
    expect(shown.action).toMatchObject({ assetIn: { kind: 'erc20', address: USDC_BASE }, assetOut: { symbol: 'WETH', decimals: 8 } })
    expect(shown.action).not.toMatchObject({ assetIn: { symbol: 'USDC' } })
    expect(mismatches.map((m) => m.address)).toEqual([WETH_BASE])
    expect(unread).toEqual([USDC_BASE])
    // The review's card: 10^12 units of a 6-decimals token declared with 18, its lookup failed.
    const spoof = makeIntent({ action: { type: 'transfer', asset: { kind: 'erc20', address: TUSD, symbol: 'TUSD', decimals: 18 }, to: '0x2222222222222222222222222222222222222222', amount: '1000000000000' } })
    const read = applyTokenFacts(spoof, [])
    expect(describeIntent(read.shown)).toBe(`Transfer 1000000000000 units of token ${TUSD} to 0x2222222222222222222222222222222222222222 on Base`)
    expect(read.unread).toEqual([TUSD])
    expect(applyTokenFacts(makeIntent({ action: actions.native() }), [{ address: USDC_BASE, symbol: 'X', decimals: 1 }]).mismatches).toEqual([])
  })

  it('a declared symbol that is not a plain ticker is shown escaped and named as the client\u2019s text, never quoted into the sentence (found by review)', () => {
    // The review's symbol: quoted as it was, it read "…as "USDC" (checked, safe); "" with 6 decimals…".
    const injected = applyTokenFacts(
      makeIntent({ action: { type: 'transfer', asset: { kind: 'erc20', address: USDC_BASE, symbol: 'USDC" (checked, safe); "', decimals: 6 }, to: '0x2222222222222222222222222222222222222222', amount: '5000000' } }),
      [{ address: USDC_BASE, symbol: 'USDC', decimals: 6 }],
    ).mismatches[0]!
    const sentence = describeMismatch(injected)
    expect(sentence).toBe(
      `the client declared token ${USDC_BASE} as a symbol that is not a plain ticker (the client's text, escaped: "USDC\\" (checked, safe); \\"") with 6 decimals; on chain it is "USDC" with 6 decimals`,
    )
    expect(sentence).not.toContain('"USDC" (checked, safe)')
  })

  it('escapes every character but printable ASCII, so a lookalike shows as what it is; a plain ticker stays as it is', () => {
    const onChain = { symbol: 'WETH', decimals: 18 }
    const said = (symbol: string) => describeMismatch({ address: WETH_BASE, declared: { symbol }, onChain })
    expect(said('W\u0415TH')).toBe(`the client declared token ${WETH_BASE} as a symbol that is not a plain ticker (the client's text, escaped: "W\\u0415TH"); on chain it is "WETH" with 18 decimals`)
    expect(said('USD\u{1f600}\u202e')).toContain('(the client\'s text, escaped: "USD\\u{1f600}\\u202e")')
    expect(said('USDC to 0xTrusted')).toContain('not a plain ticker (the client\'s text, escaped: "USDC to 0xTrusted")')
    expect(said('0x1234')).toContain('not a plain ticker')
    expect(said('USDC.e')).toBe(`the client declared token ${WETH_BASE} as "USDC.e"; on chain it is "WETH" with 18 decimals`)
  })

  it('the token\u2019s own symbol is held to the same rule: a token chooses its symbol() too', () => {
    const m = { address: WETH_BASE, declared: { decimals: 6 }, onChain: { symbol: 'WETH" (verified)', decimals: 18 } }
    expect(describeMismatch(m)).toBe(
      `the client declared token ${WETH_BASE} as 6 decimals; on chain it is a symbol that is not a plain ticker (the token's own text, escaped: "WETH\\" (verified)") with 18 decimals`,
    )
  })
})
