// Every application error code of countersign's Unix-socket JSON-RPC methods,
// in one place. JSON-RPC 2.0 reserves -32000 to -32099 for server errors; the
// standard codes (-32700 parse error ... -32603 internal error) are in
// rpc/errors.ts. Each refusal carries `data.reason` saying which one.

/** The signer refused to sign (signer.sock `sign`); data: SigningRefusalData. */
export const SIGNING_REFUSED = -32010

/** The approver refused a requestApproval (approver.sock); data: ApprovalRefusalData. */
export const APPROVAL_REFUSED = -32020

/** The gateway refused a skill's submitIntent on its per-run sandbox socket (an action or chain its manifest does not declare); data: { reason: 'forbidden_action' }. */
export const SKILL_INTENT_REFUSED = -32030

export const APPLICATION_ERROR_CODES = { SIGNING_REFUSED, APPROVAL_REFUSED, SKILL_INTENT_REFUSED } as const
