export const s = [101, 118].map((c) => String.fromCodePoint(c)).join('')
