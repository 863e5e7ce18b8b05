export * from './signer.js'
export * from './approver.js'
