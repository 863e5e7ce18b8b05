import { signerMethods, type GrantParams, type GrantResult } from '@countersign/shared'
import type { Granter } from './approvalService.js'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** An answer of the signer that is not a grant: the approval service treats it as a signer it cannot use. */
export class GrantAnswerError extends Error {
  override name = 'GrantAnswerError'
}

/**
 * The approver's granter over grant.sock. The token id and its expiry are
 * checked before they are recorded or handed on: the approver trusts the
 * signer's word on durability, not the shape of whatever comes back.
 */
export function signerGranter(signer: { call<T>(method: string, params: unknown): Promise<T> }): Granter {
  return {
    grant: async (binding: GrantParams): Promise<GrantResult> => {
      const answer = await signer.call<unknown>(signerMethods.grantApproval, binding)
      const a = answer as Partial<GrantResult> | null
      if (typeof a !== 'object' || a === null || typeof a.approvalTokenId !== 'string' || !UUID.test(a.approvalTokenId) || !Number.isSafeInteger(a.expiresAt)) {
        throw new GrantAnswerError(`the signer answered grantApproval with ${JSON.stringify(answer)?.slice(0, 200)}, not a token id and its expiry`)
      }
      return { approvalTokenId: a.approvalTokenId, expiresAt: a.expiresAt! }
    },
    durable: async () => void (await signer.call(signerMethods.grantsDurable, {})),
  }
}
