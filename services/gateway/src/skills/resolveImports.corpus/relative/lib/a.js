export * from './b.js'
export const a = 1
