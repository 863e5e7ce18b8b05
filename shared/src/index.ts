export * from './types.js'
export * from './constants.js'
