export const all = Object.values(globalThis)
