export * from './defaults.js'
export * from './policyFileSchema.js'
export * from './loadPolicy.js'
export * from './evaluatePolicy.js'
