export const read = (k) => window[k]
