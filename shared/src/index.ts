// @countersign/shared: the part the signer loads (its trusted code, with the
// signer's own). Schemas, actions, canonical hashing, builders, policy, the
// socket protocol and RPC, the audit log writer, config readers, private
// files. Nothing here may import from ./server/ at run time; the signer's
// dependency test walks its import graph to hold that.
// Server-side helpers are other entry points: '@countersign/shared/server'
// (display, audit verification), '@countersign/shared/http/*' (fastify
// helpers), '@countersign/shared/testing/*'.
export * from './types.js'
export * from './constants.js'
export * from './validation.js'
export * from './canonical/jcs.js'
export * from './canonical/hash.js'
export * from './schemas/index.js'
export * from './protocol/index.js'
export * from './actions/index.js'
export * from './builders/index.js'
export * from './policy/index.js'
export * from './audit/index.js'
export * from './rpc/index.js'
export * from './files/privateFiles.js'
export * from './files/trustedFile.js'
export * from './files/walSync.js'
export * from './files/walCheckpoints.js'
export * from './operatorError.js'
export * from './config/index.js'
// The public API's response bodies: types only (nothing loads at run time), for clients.
export type * from './server/wire.js'
export * from './files/openDatabase.js'
export * from './files/instanceLock.js'
