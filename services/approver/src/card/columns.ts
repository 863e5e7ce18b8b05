// How much of a terminal row text takes: enough of Unicode's widths to keep a
// client's words on one row (no dependency for a full East Asian Width table).
//
// The count errs wide. Found by review: the table of two-column characters
// left out Tangut, the kana supplements and the enclosed ideographic
// supplement, so a note of 27 Tangut letters and "Requested by skill payroll"
// was 80 columns by this count and 106 in a terminal, and its tail wrapped to
// a row of its own, outside the "client says:" line. A character counted wider
// than a terminal draws it only makes a line clip sooner; one counted narrower
// lets it wrap. So above U+1FFF (where all the wide blocks are) a character is
// one column only where it is known to be: in a block of narrow characters and
// assigned in this Node's Unicode data. Anything else there (a block not
// listed below, a character newer than this Node, private use) counts as two.

/** Drawn on top of the character before: no column of their own. */
const ZERO_WIDTH = /^[\p{Mn}\p{Me}]$/u

/**
 * Two columns: the East_Asian_Width Wide and Fullwidth blocks, each named.
 * Below U+2000 only the Hangul leading jamo; the ones inside the narrow
 * symbol blocks (U+2000–2E7F) are the emoji drawn as emoji plus the angle
 * brackets, trigrams and digrams listed here.
 */
const WIDE = new RegExp(
  '^(?:[' +
    [
      '\\u1100-\\u115f', // Hangul Jamo, leading consonants
      '\\u2329-\\u232a', // angle brackets
      '\\u2630-\\u2637\\u268a-\\u268f', // trigrams, monograms and digrams (Wide since Unicode 16)
      '\\u2e80-\\u303e', // CJK radicals, Kangxi radicals, ideographic description, CJK symbols and punctuation
      '\\u3040-\\u33ff', // hiragana, katakana, bopomofo, Hangul compatibility jamo, kanbun, CJK strokes, enclosed CJK, CJK compatibility
      '\\u3400-\\u4dbf\\u4dc0-\\u4dff\\u4e00-\\u9fff', // CJK extension A, Yijing hexagrams (Wide since Unicode 16), CJK unified ideographs
      '\\ua000-\\ua4cf', // Yi syllables and radicals
      '\\ua960-\\ua97f', // Hangul Jamo extended A
      '\\uac00-\\ud7a3', // Hangul syllables
      '\\uf900-\\ufaff', // CJK compatibility ideographs
      '\\ufe10-\\ufe19\\ufe30-\\ufe6f', // vertical forms, CJK compatibility forms, small form variants
      '\\uff00-\\uff60\\uffe0-\\uffe6', // fullwidth forms
      '\\u{16fe0}-\\u{16fff}', // ideographic symbols and punctuation
      '\\u{17000}-\\u{187ff}\\u{18800}-\\u{18aff}\\u{18b00}-\\u{18cff}\\u{18d00}-\\u{18dff}', // Tangut, Tangut components, Khitan small script, Tangut supplement
      '\\u{1aff0}-\\u{1afff}\\u{1b000}-\\u{1b0ff}\\u{1b100}-\\u{1b12f}\\u{1b130}-\\u{1b16f}', // kana extended B, kana supplement, kana extended A, small kana extension
      '\\u{1b170}-\\u{1b2ff}', // Nushu
      '\\u{1d300}-\\u{1d37f}', // Tai Xuan Jing symbols, counting rod numerals
      '\\u{1f004}\\u{1f0cf}\\u{1f18e}\\u{1f191}-\\u{1f19a}', // the mahjong, playing card and squared-letter emoji
      '\\u{1f200}-\\u{1f2ff}', // enclosed ideographic supplement
      '\\u{1f300}-\\u{1f64f}\\u{1f680}-\\u{1f6ff}', // pictographs, emoticons, transport and map symbols
      '\\u{1f7e0}-\\u{1f7eb}\\u{1f7f0}', // large coloured circles and squares
      '\\u{1f900}-\\u{1f9ff}\\u{1fa70}-\\u{1faff}', // supplemental pictographs, symbols and pictographs extended A
      '\\u{20000}-\\u{2fffd}\\u{30000}-\\u{3fffd}', // CJK extensions B onwards, compatibility supplement
    ].join('') +
    ']|\\p{Emoji_Presentation})$',
  'u',
)

/** Above U+1FFF, the blocks whose characters a terminal draws one column wide (their wide ones are in WIDE). */
const KNOWN_NARROW = new RegExp(
  '^[' +
    [
      '\\u2000-\\u2e7f', // punctuation, currency, letterlike, arrows, maths, technical, box drawing, shapes, symbols, dingbats, braille, Glagolitic … supplemental punctuation
      '\\u303f', // ideographic half fill space
      '\\ua4d0-\\ua95f\\ua980-\\uabff', // Lisu … Rejang, Javanese … Meetei Mayek
      '\\ud7b0-\\ud7ff', // Hangul Jamo extended B (vowels and final consonants)
      '\\ufb00-\\ufdff\\ufe00-\\ufe0f\\ufe20-\\ufe2f\\ufe70-\\ufeff', // presentation forms, variation selectors, combining half marks
      '\\uff61-\\uffdc\\uffe8-\\uffee', // halfwidth forms
      '\\ufff9-\\ufffd', // specials (the replacement character)
      '\\u{10000}-\\u{16fdf}', // the historic and minority scripts of the SMP, up to Nushu's neighbours
      '\\u{1bc00}-\\u{1cfff}', // Duployan, shorthand format controls, legacy computing supplement, Znamenny
      '\\u{1d000}-\\u{1d2ff}', // musical symbols, Greek musical notation, Kaktovik and Mayan numerals
      '\\u{1d400}-\\u{1eeff}', // mathematical alphanumerics, SignWriting, Latin extended G … Arabic mathematical symbols
      '\\u{1f000}-\\u{1f1ff}', // mahjong, dominoes, playing cards, enclosed alphanumeric supplement
      '\\u{1f650}-\\u{1f67f}', // ornamental dingbats
      '\\u{1f700}-\\u{1f8ff}', // alchemical symbols, geometric shapes extended, supplemental arrows C
      '\\u{1fa00}-\\u{1fa6f}\\u{1fb00}-\\u{1fbff}', // chess symbols, symbols for legacy computing
    ].join('') +
    ']$',
  'u',
)

/** Not a character in this Node's Unicode data (yet): its width is unknown. */
const UNASSIGNED = /^\p{Cn}$/u

/** Every East_Asian_Width Wide or Fullwidth character but the Hangul leading jamo is above this. */
const LAST_OF_THE_NARROW_RANGE = 0x1fff

/** Above U+1FFF and not known to be narrow: counted as two columns, so that clipping clips more, never less. */
function mayBeWide(char: string): boolean {
  if ((char.codePointAt(0) ?? 0) <= LAST_OF_THE_NARROW_RANGE) return false
  return UNASSIGNED.test(char) || !KNOWN_NARROW.test(char)
}

export function columnsOf(char: string): number {
  if (ZERO_WIDTH.test(char)) return 0
  return WIDE.test(char) || mayBeWide(char) ? 2 : 1
}

/** Columns the whole text takes on one row. */
export const textColumns = (text: string): number => [...text].reduce((n, c) => n + columnsOf(c), 0)

/**
 * The text cut to fit `columns`, ending in "…" when cut. Counting code points
 * would not do: a note of ideographs or emoji takes two columns a character
 * and would still wrap.
 */
export function clipToColumns(text: string, columns: number): string {
  if (textColumns(text) <= columns) return text
  let kept = ''
  let used = 0
  for (const c of text) {
    const w = columnsOf(c)
    if (used + w > columns - 1) break
    kept += c
    used += w
  }
  return `${kept}…`
}
