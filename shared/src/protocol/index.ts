export * from './signer.js'
export * from './approver.js'
export { clipText, fitApprovalParams } from './fitApprovalParams.js'
export { APPLICATION_ERROR_CODES, SKILL_INTENT_REFUSED } from './errorCodes.js'
