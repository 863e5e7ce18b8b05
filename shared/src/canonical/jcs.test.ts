import { describe, expect, it } from 'vitest'
import { canonicalize, CanonicalizationError } from './jcs.js'

describe('canonicalize (RFC 8785)', () => {
  it('sorts object members by UTF-16 code units, recursively', () => {
    expect(canonicalize({ b: 1, a: { d: true, c: null } })).toBe('{"a":{"c":null,"d":true},"b":1}')
    // RFC 8785 §3.2.3: "\u20ac" (€) sorts after "\r" and before "\ud83d\ude00" (😀) by code units;
    // "é" (U+00E9) sorts before "€" (U+20AC), and the surrogate pair of 😀 (0xD83D) after both.
    expect(canonicalize({ '😀': 3, '€': 2, é: 1, a: 0 })).toBe('{"a":0,"é":1,"€":2,"😀":3}')
  })

  it('serialises numbers the ECMAScript way', () => {
    expect(canonicalize([1e21, 1e-7, 0.000001, -0, 100, 1.5, 333333333.33333329])).toBe(
      '[1e+21,1e-7,0.000001,0,100,1.5,333333333.3333333]',
    )
  })

  it('escapes strings as JSON.stringify does', () => {
    expect(canonicalize('a"b\\c\n\u0001')).toBe('"a\\"b\\\\c\\n\\u0001"')
    expect(canonicalize('€😀')).toBe('"€😀"')
  })

  it('keeps array order and drops undefined members', () => {
    expect(canonicalize({ x: [3, 1, 2], y: undefined })).toBe('{"x":[3,1,2]}')
  })

  it('refuses what JSON cannot represent', () => {
    expect(() => canonicalize(Number.NaN)).toThrow(CanonicalizationError)
    expect(() => canonicalize(Number.POSITIVE_INFINITY)).toThrow(CanonicalizationError)
    expect(() => canonicalize({ f: () => 1 })).toThrow(CanonicalizationError)
    expect(() => canonicalize(10n)).toThrow(CanonicalizationError)
  })
})
