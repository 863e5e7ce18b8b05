// '@countersign/shared/server': helpers of the gateway, the approver and the
// CLIs that the signer never loads. (The fastify helpers are the
// '@countersign/shared/http/*' entry points; test factories
// '@countersign/shared/testing/*'.)
export * from './display/index.js'
export * from './audit/verify.js'
export * from './audit/anchor.js'
export { createSignatureCheck, type SignerSignature, type SignerSignatures } from './audit/signatureCheck.js'
export type * from './wire.js'
