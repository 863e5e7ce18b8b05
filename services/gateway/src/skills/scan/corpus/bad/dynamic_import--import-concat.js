const base = 'node:'
export const m = import(base + 'fs')
