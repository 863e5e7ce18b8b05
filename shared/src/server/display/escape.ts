/**
 * Characters that make shown text lie: C0/C1 controls (terminal escapes,
 * carriage returns that overwrite a line), bidi controls (U+202E turns
 * "gpj.exe" into "exe.jpg"), zero-width and other invisible format
 * characters, line and paragraph separators; also the combining grapheme
 * joiner, Khmer's invisible vowels, musical-notation format characters, tag
 * characters (U+E0000–E007F, whole hidden sentences) and the supplementary
 * variation selectors. By Unicode's own classes (controls, format
 * characters, default-ignorable code points) rather than a list of ranges: a
 * review found the Mongolian variation selectors (U+180B–180F) and the
 * shorthand format controls (U+1BCA0–1BCA3) missing from the list, invisible
 * on a card next to a symbol. The fillers that draw as blank space (Hangul
 * U+115F, U+1160, U+3164, U+FFA0, Khmer U+17B4–17B5) and the line and
 * paragraph separators are named as well.
 */
const HIDDEN =
  /[\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}\u115f\u1160\u17b4\u17b5\u2028\u2029\u3164\uffa0]/gu

/**
 * Any string shown to an operator (card, terminal, audit action text): each
 * hidden or control character appears as its escape, visibly (`\u202e`), so
 * what the operator reads is what the string contains.
 */
export function escapeForDisplay(text: string): string {
  return text.replace(HIDDEN, (c) => {
    const cp = c.codePointAt(0)!
    return cp > 0xffff ? `\\u{${cp.toString(16)}}` : `\\u${cp.toString(16).padStart(4, '0')}`
  })
}

/**
 * White space that lays text out: the ordinary space, the no-break and other
 * Unicode spaces (U+00A0, U+1680, U+2000-200A, U+202F, U+205F, U+3000) and
 * the braille blank U+2800, which is drawn as one.
 */
const SPACE_RUN = /[\p{Zs}\u2800]+/gu

/**
 * Any string on an approval card (the dashboard and the terminals): escaped
 * like escapeForDisplay, and each run of white space one ordinary space,
 * trimmed. Found by review: a client's note padded with spaces to a
 * terminal's width wrapped into rows that read exactly like the lines of a
 * second card, right above the real prompt. A Unicode space is collapsed, not
 * shown as an escape: one no-break space in French or an ideographic space in
 * Japanese reads as the space it is, and its width, the only thing it could
 * be used for here, is gone once it is one ordinary space.
 */
export function escapeForCard(text: string): string {
  return escapeForDisplay(text).replace(SPACE_RUN, ' ').trim()
}

/**
 * JSON text (JSON.stringify's output) with each hidden or control character
 * written as its JSON escape (astral ones as a surrogate pair): a JSON reader
 * gets the same value, a terminal nothing to act on. JSON.stringify escapes
 * U+0000-001F only, not DEL, C1 controls (U+009B is a terminal's CSI) or bidi
 * characters. Such characters occur only inside the strings of that output.
 */
export function escapeJsonForDisplay(json: string): string {
  return json.replace(HIDDEN, (c) => {
    let escaped = ''
    for (let i = 0; i < c.length; i++) escaped += `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`
    return escaped
  })
}

/** True when escapeForDisplay would change the text. */
export function hasHiddenCharacters(text: string): boolean {
  HIDDEN.lastIndex = 0
  const found = HIDDEN.test(text)
  HIDDEN.lastIndex = 0
  return found
}
