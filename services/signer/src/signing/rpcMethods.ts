import {
  RpcError,
  RPC_INVALID_PARAMS,
  SERVICE_VERSION,
  createAjv,
  describeValidationErrors,
  emptyParamsSchema,
  grantParamsSchema,
  signParamsSchema,
  type GrantParams,
  type SignParams,
} from '@countersign/shared'
import type { SignerCore } from './signerCore.js'

type Method = (params: unknown) => Promise<unknown> | unknown

/** Wraps a handler so it only ever sees params that passed the signer's own schema. */
function validated<T>(schema: object, handler: (p: T) => Promise<unknown> | unknown): Method {
  const validate = createAjv().compile<T>(schema)
  return (params) => {
    if (!validate(params)) throw new RpcError(RPC_INVALID_PARAMS, describeValidationErrors(validate.errors, 'params'))
    return handler(params)
  }
}

/** signer.sock: what the gateway may ask. No method takes raw data to sign. */
export function gatewayMethods(core: SignerCore, startedAtMs: number, clock: () => number): Record<string, Method> {
  return {
    sign: validated<SignParams>(signParamsSchema, (p) => core.sign(p)),
    accounts: validated(emptyParamsSchema, () => core.accounts()),
    health: validated(emptyParamsSchema, () => ({
      status: 'ok',
      version: SERVICE_VERSION,
      uptime: (clock() - startedAtMs) / 1000,
      accounts: core.accounts().length,
      // What group commit achieved: signatures per fsync of each database (the benchmark reads it).
      durability: core.durability(),
    })),
  }
}

/** grant.sock: the approver's only power is minting a token bound to one txRequestHash (and waiting until it is on disk). */
export function grantMethods(core: SignerCore): Record<string, Method> {
  return {
    grantApproval: validated<GrantParams>(grantParamsSchema, (p) => core.grantApproval(p)),
    grantsDurable: validated(emptyParamsSchema, () => core.grantsDurable()),
  }
}
