import { describe, expect, it } from 'vitest'
import { canonicalize, CanonicalizationError, jsonString } from './jcs.js'

/** The IEEE 754 double with the given 64-bit pattern (how RFC 8785 Appendix B lists its inputs). */
function double(bits: string): number {
  const view = new DataView(new ArrayBuffer(8))
  view.setBigUint64(0, BigInt(`0x${bits}`))
  return view.getFloat64(0)
}

describe('canonicalize (RFC 8785)', () => {
  describe('object members', () => {
    it('are sorted by key, recursively, with no whitespace', () => {
      expect(canonicalize({ b: 1, a: { d: true, c: null } })).toBe('{"a":{"c":null,"d":true},"b":1}')
      expect(canonicalize({ b: 0, aa: 0, a: 0, A: 0, _: 0, '': 0 })).toBe('{"":0,"A":0,"_":0,"a":0,"aa":0,"b":0}')
    })

    it('are sorted by UTF-16 code units, not by code points (RFC 8785 §3.2.3)', () => {
      // The RFC's own example. By code point U+1F600 (grinning face) would come
      // after U+FB33; by UTF-16 code unit its lead surrogate 0xD83D comes first.
      const input = {
        '\u20ac': 'Euro Sign',
        '\r': 'Carriage Return',
        '\ufb33': 'Hebrew Letter Dalet With Dagesh',
        '1': 'One',
        '\ud83d\ude00': 'Emoji: Grinning Face',
        '\u0080': 'Control',
        '\u00f6': 'Latin Small Letter O With Diaeresis',
      }
      expect(canonicalize(input)).toBe(
        '{"\\r":"Carriage Return","1":"One","\u0080":"Control","ö":"Latin Small Letter O With Diaeresis",' +
          '"€":"Euro Sign","😀":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
      )
    })

    it('keep insertion order out of the result', () => {
      const forwards = { chainId: 1, data: '0x', from: 'f', to: 't', type: 'eip1559', value: '0' }
      const backwards = Object.fromEntries(Object.entries(forwards).reverse())
      expect(canonicalize(backwards)).toBe(canonicalize(forwards))
    })

    it('drop members whose value is undefined', () => {
      expect(canonicalize({ x: [3, 1, 2], y: undefined })).toBe('{"x":[3,1,2]}')
      expect(canonicalize({ y: undefined })).toBe('{}')
    })
  })

  it('keeps array order and nests arrays and objects', () => {
    expect(canonicalize([[], {}, [{ b: [1, { d: 0, c: [null, false] }], a: 'x' }], 'z'])).toBe(
      '[[],{},[{"a":"x","b":[1,{"c":[null,false],"d":0}]}],"z"]',
    )
  })

  describe('numbers', () => {
    it('use the ECMAScript shortest round-trip form', () => {
      expect(canonicalize([1e21, 1e20, 1e-7, 0.000001, -0, 0, 100, 1.5, -2, 333333333.33333329])).toBe(
        '[1e+21,100000000000000000000,1e-7,0.000001,0,0,100,1.5,-2,333333333.3333333]',
      )
      expect(canonicalize(-0)).toBe('0')
    })

    it.each<[string, string]>([
      // RFC 8785 Appendix B: IEEE 754 bit pattern → canonical text.
      ['0000000000000000', '0'],
      ['8000000000000000', '0'],
      ['0000000000000001', '5e-324'],
      ['8000000000000001', '-5e-324'],
      ['7fefffffffffffff', '1.7976931348623157e+308'],
      ['ffefffffffffffff', '-1.7976931348623157e+308'],
      ['4340000000000000', '9007199254740992'],
      ['c340000000000000', '-9007199254740992'],
      ['4430000000000000', '295147905179352830000'],
      ['44b52d02c7e14af5', '9.999999999999997e+22'],
      ['44b52d02c7e14af6', '1e+23'],
      ['44b52d02c7e14af7', '1.0000000000000001e+23'],
      ['444b1ae4d6e2ef4e', '999999999999999700000'],
      ['444b1ae4d6e2ef4f', '999999999999999900000'],
      ['444b1ae4d6e2ef50', '1e+21'],
      ['3eb0c6f7a0b5ed8c', '9.999999999999997e-7'],
      ['3eb0c6f7a0b5ed8d', '0.000001'],
      ['41b3de4355555553', '333333333.3333332'],
      ['41b3de4355555554', '333333333.33333325'],
      ['41b3de4355555555', '333333333.3333333'],
      ['41b3de4355555556', '333333333.3333334'],
      ['41b3de4355555557', '333333333.33333343'],
      ['becbf647612f3696', '-0.0000033333333333333333'],
      ['43143ff3c1cb0959', '1424953923781206.2'],
    ])('0x%s → %s', (bits, text) => {
      expect(canonicalize(double(bits))).toBe(text)
    })
  })

  describe('strings', () => {
    it('escape only ", \\ and control characters, with the short forms where JSON has them', () => {
      expect(canonicalize('a"b\\c\n\u0001')).toBe('"a\\"b\\\\c\\n\\u0001"')
      expect(canonicalize('\b\f\n\r\t\u000b\u001f')).toBe('"\\b\\f\\n\\r\\t\\u000b\\u001f"')
      // RFC 8785 §3.2.2.2 example: "/" and DEL stay as they are; \u000F becomes lower-case \u000f.
      expect(canonicalize('\u20ac$\u000F\u000aA\'\u0042\u0022\u005c\\"/')).toBe('"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"')
      expect(canonicalize('\u007f/')).toBe('"\u007f/"')
    })

    it('keep non-ASCII characters as UTF-8, unescaped, including U+2028 and astral characters', () => {
      expect(canonicalize('€😀')).toBe('"€😀"')
      expect(canonicalize('\u2028\u2029')).toBe('"\u2028\u2029"')
    })

    it('escape keys the same way as values', () => {
      expect(canonicalize({ 'a"b': 1, 'line\n': 2 })).toBe('{"a\\"b":1,"line\\n":2}')
    })
  })

  it('serialises the literals', () => {
    expect(canonicalize(null)).toBe('null')
    expect(canonicalize(true)).toBe('true')
    expect(canonicalize(false)).toBe('false')
    expect(canonicalize({ n: null })).toBe('{"n":null}')
  })

  it('refuses what JSON cannot represent', () => {
    expect(() => canonicalize(Number.NaN)).toThrow(CanonicalizationError)
    expect(() => canonicalize({ a: [Number.NaN] })).toThrow(CanonicalizationError)
    expect(() => canonicalize(Number.POSITIVE_INFINITY)).toThrow(CanonicalizationError)
    expect(() => canonicalize(Number.NEGATIVE_INFINITY)).toThrow(CanonicalizationError)
    expect(() => canonicalize({ f: () => 1 })).toThrow(CanonicalizationError)
    expect(() => canonicalize(10n)).toThrow(CanonicalizationError)
    expect(() => canonicalize(Symbol('s'))).toThrow(CanonicalizationError)
    // Unlike JSON.stringify, an undefined array element is not turned into null.
    expect(() => canonicalize([undefined])).toThrow(CanonicalizationError)
    expect(() => canonicalize(undefined)).toThrow(CanonicalizationError)
  })
})

describe('jsonString', () => {
  it('writes every UTF-16 code unit as JSON.stringify does, alone and between others', () => {
    for (let unit = 0; unit <= 0xffff; unit++) {
      const c = String.fromCharCode(unit)
      for (const s of [c, `a${c}b`, `${c}${c}`]) {
        if (jsonString(s) !== JSON.stringify(s)) expect.fail(`code unit 0x${unit.toString(16)} in ${JSON.stringify(s)}: ${jsonString(s)}`)
      }
    }
  })

  it('writes surrogate pairs, lone surrogates and the empty string as JSON.stringify does', () => {
    for (const s of ['', '😀', 'x\ud83d', '\ude00x', '\ude00\ud83d', '0x70997970C51812dc3A010C7d01b50e0d17dc79C8', 'a"b\\c']) {
      expect(jsonString(s)).toBe(JSON.stringify(s))
    }
  })
})
