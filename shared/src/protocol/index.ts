export * from './signer.js'
export * from './approver.js'
export * from './sockets.js'
