// Column counting errs wide: a character a terminal draws two columns wide is
// never counted as one (found by review: Tangut, the kana supplements and the
// enclosed ideographic supplement were).
import { describe, expect, it } from 'vitest'
import { defaultRouterTable, noPreflight } from '@countersign/shared'
import { actions, makeIntent } from '@countersign/shared/testing/intents'
import { summarise } from '../summary.js'
import { cardText } from './cardText.js'
import { clipToColumns, columnsOf, textColumns } from './columns.js'
import { renderCard } from './renderCard.js'

const cp = (n: number) => String.fromCodePoint(n)

/**
 * What a terminal draws for the characters these tests use, written out here
 * rather than taken from columns.ts (glibc's wcwidth gives 2 for these wide
 * ones): the note's Tangut, ASCII, and the card's own "…".
 */
const drawnColumns = (text: string) => [...text].reduce((n, c) => n + (/[\u{17000}-\u{187f7}\u{1b000}-\u{1b2ff}]/u.test(c) ? 2 : 1), 0)

describe('columnsOf', () => {
  it('counts the East Asian Wide blocks the review found missing as two columns', () => {
    const wide = [
      0x17000, 0x187f7, // Tangut
      0x18800, 0x18aff, // Tangut components
      0x18b00, // Khitan small script
      0x18d00, // Tangut supplement
      0x16fe0, // ideographic symbols and punctuation
      0x1aff0, // kana extended B
      0x1b000, 0x1b0ff, // kana supplement
      0x1b100, // kana extended A
      0x1b150, // small kana extension
      0x1b170, 0x1b2fb, // Nushu
      0x1f200, 0x1f210, 0x1f23b, 0x1f250, 0x1f260, // enclosed ideographic supplement
      0x2329, 0x232a, // angle brackets
      0x1d300, // Tai Xuan Jing
    ]
    for (const c of wide) expect([c.toString(16), columnsOf(cp(c))]).toEqual([c.toString(16), 2])
  })

  it('still counts CJK, kana, Hangul, fullwidth forms and emoji as two', () => {
    for (const c of ['請', 'か', 'カ', '한', 'Ａ', '￥', '😀', '🚀', '🤖', '⌚', '\u1100']) expect([c, columnsOf(c)]).toEqual([c, 2])
  })

  it('counts what is unassigned or unknown above U+1FFF as two, so that clipping clips more, never less', () => {
    // Unassigned in every Unicode so far, a private-use character, a noncharacter.
    for (const c of [0x2fe0, 0x1fffd, 0x3fffd + 1, 0xe000, 0xf0000, 0x10fffd, 0xfffe]) expect([c.toString(16), columnsOf(cp(c))]).toEqual([c.toString(16), 2])
  })

  it('keeps the narrow scripts and symbols at one column and combining marks at none', () => {
    for (const c of ['a', 'é', 'Ж', 'α', 'ש', 'ب', 'क', '…', '│', '─', '→', '€', '·', '™', 'ｱ', '\ufffd', '\u{10000}', '\u{1d400}', '\u{13000}'])
      expect([c, columnsOf(c)]).toEqual([c, 1])
    for (const c of ['\u0301', '\u20dd', '\u302a', '\ufe0f', '\u{e0100}']) expect([c, columnsOf(c)]).toEqual([c, 0])
  })

  it('clips Tangut by two columns a character', () => {
    const tangut = cp(0x17000).repeat(10)
    expect(textColumns(tangut)).toBe(20)
    expect(clipToColumns(tangut, 9)).toBe(`${cp(0x17000).repeat(4)}…`)
  })
})

describe('a client\u2019s note of wide characters on the terminal card', () => {
  it('the review\u2019s note (27 Tangut letters, then "Requested by skill payroll") is clipped to fit its row', () => {
    const intent = makeIntent({ action: actions.native('1000') })
    intent.metadata = { note: cp(0x17000).repeat(27) + 'Requested by skill payroll' }
    const card = renderCard(summarise({ intent, preflight: noPreflight(), policyReasons: ['x'] }, defaultRouterTable()))
    const noteRow = cardText(card, { requestId: 'r1', columns: 80, indent: '  ' }).find((l) => l.includes('client says'))!
    // Before: 80 columns by this count and 106 drawn, so the ASCII tail wrapped to a row of its own.
    expect(drawnColumns(noteRow)).toBeLessThan(80)
    expect(textColumns(noteRow)).toBe(drawnColumns(noteRow))
    expect(noteRow).toMatch(/client says: \u{17000}+…$/u)
    expect(noteRow).not.toContain('Requested')
  })
})
