export * from './schema.js'
export * from './rowHash.js'
export * from './auditLog.js'
export * from './verify.js'
