/**
 * Characters that make shown text lie: C0/C1 controls (terminal escapes,
 * carriage returns that overwrite a line), bidi controls (U+202E turns
 * "gpj.exe" into "exe.jpg"), zero-width and other invisible format
 * characters, line and paragraph separators.
 */
const HIDDEN = /[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u115f\u1160\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb]/gu

/**
 * Any string shown to an operator (card, terminal, audit action text): each
 * hidden or control character appears as its escape, visibly (`\u202e`), so
 * what the operator reads is what the string contains.
 */
export function escapeForDisplay(text: string): string {
  return text.replace(HIDDEN, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

/** True when escapeForDisplay would change the text. */
export function hasHiddenCharacters(text: string): boolean {
  HIDDEN.lastIndex = 0
  const found = HIDDEN.test(text)
  HIDDEN.lastIndex = 0
  return found
}
