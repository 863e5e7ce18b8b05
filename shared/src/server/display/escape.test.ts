import { describe, expect, it } from 'vitest'
import { escapeForCard, escapeForDisplay, escapeJsonForDisplay, hasHiddenCharacters } from './escape.js'

describe('escapeForDisplay', () => {
  it('shows bidi overrides, controls and invisible characters as escapes', () => {
    expect(escapeForDisplay('pay \u202egnp.exe')).toBe('pay \\u202egnp.exe')
    expect(escapeForDisplay('a\u001b[31mred')).toBe('a\\u001b[31mred')
    expect(escapeForDisplay('line\rover')).toBe('line\\u000dover')
    expect(escapeForDisplay('new\nline')).toBe('new\\u000aline')
    expect(escapeForDisplay('zero\u200bwidth\ufeff')).toBe('zero\\u200bwidth\\ufeff')
    expect(escapeForDisplay('iso\u2066late\u2069')).toBe('iso\\u2066late\\u2069')
    expect(escapeForDisplay('c1\u009bx')).toBe('c1\\u009bx')
    // Found by review: the grapheme joiner and tag characters (a whole hidden sentence) were left as they were.
    expect(escapeForDisplay('a\u034fb')).toBe('a\\u034fb')
    expect(escapeForDisplay('ok\u{e0041}\u{e0070}\u{e0070}')).toBe('ok\\u{e0041}\\u{e0070}\\u{e0070}')
    expect(escapeForDisplay('x\u{1d173}\u{e0100}\u17b4')).toBe('x\\u{1d173}\\u{e0100}\\u17b4')
    expect(hasHiddenCharacters('pay\u{e0020}')).toBe(true)
    // Found by review: invisible next to a symbol, and missing from the list of ranges this was before.
    expect(escapeForDisplay('WETH\u180b\u180f')).toBe('WETH\\u180b\\u180f')
    expect(escapeForDisplay('WETH\u{1bca0}\u{1bca3}')).toBe('WETH\\u{1bca0}\\u{1bca3}')
    expect(hasHiddenCharacters('USDC\u180c')).toBe(true)
  })

  it('leaves ordinary text, accents, other scripts and emoji alone', () => {
    for (const s of ['Transfer 90 TUSD to 0xAbC', 'Zürich café', 'Привет', 'مرحبا', '数据', '🚀 moon']) {
      expect(escapeForDisplay(s)).toBe(s)
      expect(hasHiddenCharacters(s)).toBe(false)
    }
    expect(hasHiddenCharacters('x\u202ey')).toBe(true)
    expect(hasHiddenCharacters('x\u202ey')).toBe(true)
  })
})

describe('escapeJsonForDisplay', () => {
  it('writes what JSON.stringify leaves raw (DEL, C1, bidi, tag characters) as JSON escapes: the same value, nothing hidden', () => {
    const value = { a: 'x\u007fy\u009b31m\u202egnp', b: ['ok\u{e0041}', '\u001b[2K'], plain: 'Zürich 🚀' }
    const shown = escapeJsonForDisplay(JSON.stringify(value))
    expect(hasHiddenCharacters(shown)).toBe(false)
    expect(shown).toContain('\\u009b31m\\u202egnp')
    expect(shown).toContain('ok\\udb40\\udc41')
    expect(JSON.parse(shown)).toEqual(value)
  })
})

describe('escapeForCard', () => {
  it('makes each run of white space, Unicode spaces included, one ordinary space (found by review: a note padded to a terminal\u2019s width laid out a fake card)', () => {
    const padded = `invoice 4711${' '.repeat(68)}Transfer 5 USDC to 0x2222`
    expect(escapeForCard(padded)).toBe('invoice 4711 Transfer 5 USDC to 0x2222')
    for (const space of ['\u00a0', '\u1680', '\u2000', '\u2005', '\u200a', '\u202f', '\u205f', '\u3000', '\u2800']) {
      expect(escapeForCard(`a${space.repeat(70)}b`), `U+${space.codePointAt(0)!.toString(16)}`).toBe('a b')
    }
    expect(escapeForCard(' \u00a0 \u3000 lead and trail \u2003 ')).toBe('lead and trail')
  })

  it('escapes like escapeForDisplay (a tab or newline stays visible as its escape), and leaves single spaces of ordinary text as spaces', () => {
    expect(escapeForCard('a\tb\n  c\u202e')).toBe('a\\u0009b\\u000a c\\u202e')
    expect(escapeForCard('Prix\u00a0: 5\u00a0€')).toBe('Prix : 5 €')
    expect(escapeForCard('請求書\u3000第4711号')).toBe('請求書 第4711号')
    expect(escapeForCard('Transfer 90 TUSD to 0xAbC')).toBe('Transfer 90 TUSD to 0xAbC')
  })
})
