// Pieces of the gateway's route schemas that several route groups share.
import { addressSchema, txHashSchema } from '@countersign/shared'
import { simpleErrorSchema } from '@countersign/shared/http/errorBodies'
import { closed, described, str, strings } from '@countersign/shared/http/schemaParts'

export { addressSchema, txHashSchema }

/** SPEC "Policy decision". */
export const policyDecisionSchema = closed({ decision: { enum: ['allow', 'deny', 'require_approval'] }, reasons: strings, policyVersion: str })

export const noRpcOrRpcError = described('no_rpc_client (no RPC is configured for the chain) or rpc_error (the node failed; the message carries it)', simpleErrorSchema)
