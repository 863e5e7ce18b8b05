export * from './escape.js'
export * from './tokenFacts.js'
