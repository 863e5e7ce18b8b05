// How much of a terminal row text takes: enough of Unicode's widths to keep a
// client's words on one row (no dependency for a full East Asian Width table).

/** Drawn on top of the character before: no column of their own. */
const ZERO_WIDTH = /^[\p{Mn}\p{Me}]$/u

/** Two columns: Hangul jamo, CJK, kana, Hangul syllables, fullwidth forms, emoji. */
const WIDE =
  /^(?:[\u1100-\u115f\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\ua960-\ua97f\uac00-\ud7a3\uf900-\ufaff\ufe10-\ufe19\ufe30-\ufe6f\uff00-\uff60\uffe0-\uffe6\u{1f300}-\u{1f64f}\u{1f900}-\u{1f9ff}\u{20000}-\u{2fffd}\u{30000}-\u{3fffd}]|\p{Emoji_Presentation})$/u

export function columnsOf(char: string): number {
  if (ZERO_WIDTH.test(char)) return 0
  return WIDE.test(char) ? 2 : 1
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
