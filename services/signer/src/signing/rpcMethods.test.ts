import { describe, expect, it } from 'vitest'
import { RpcError } from '@countersign/shared'
import { gatewayMethods, grantMethods } from './rpcMethods.js'
import type { SignerCore } from './signerCore.js'

const core: SignerCore = {
  sign: async () => {
    throw new Error('not reached in these tests')
  },
  grantApproval: async () => ({ approvalTokenId: 'x', expiresAt: 0 }),
  grantsDurable: async () => ({}),
  accounts: () => [],
  auditMissed: async () => ({ late: 0, logged: 0 }),
  durability: () => ({ signatures: 0, cpuUs: { user: 0, system: 0 }, signerDb: { commits: 0, syncs: 0, syncMs: 0, waitersPerSync: {} }, auditDb: undefined, storeTransactions: { transactions: 0, jobs: 0 } }),
}

describe('the signer interface', () => {
  it('is exactly sign/accounts/health for the gateway and grantApproval/grantsDurable for the approver: nothing signs raw data', () => {
    expect(Object.keys(gatewayMethods(core, 0, () => 0)).sort()).toEqual(['accounts', 'health', 'sign'])
    expect(Object.keys(grantMethods(core)).sort()).toEqual(['grantApproval', 'grantsDurable'])
  })

  it('grantsDurable takes no params', async () => {
    const durable = grantMethods(core).grantsDurable!
    expect(() => durable({ upTo: 3 })).toThrow(RpcError)
    await expect(durable({})).resolves.toEqual({})
    await expect(durable([])).resolves.toEqual({})
  })

  it.each([
    ['no params', {}],
    ['a raw hash instead of an intent', { hash: '0x' + '11'.repeat(32) }],
    ['calldata beside an intent', { intent: {}, txRequest: {}, data: '0x' }],
  ])('sign refuses %s with invalid params', async (_n, params) => {
    const sign = gatewayMethods(core, 0, () => 0).sign!
    const err = await Promise.resolve()
      .then(() => sign(params))
      .catch((e: unknown) => e)
    expect(err).toBeInstanceOf(RpcError)
    expect((err as RpcError).code).toBe(-32602)
  })

  it('grantApproval validates both hashes and the intent id', async () => {
    const grant = grantMethods(core).grantApproval!
    const ok = { txRequestHash: '0x' + 'ab'.repeat(32), intentHash: '0x' + 'cd'.repeat(32), intentId: '123e4567-e89b-12d3-a456-426614174000' }
    expect(() => grant({ txRequestHash: '0x12', intentHash: ok.intentHash, intentId: 'x' })).toThrow(RpcError)
    expect(() => grant({ ...ok, extra: 1 })).toThrow(RpcError)
    // A token without the intent it approves would bind to the transaction alone.
    expect(() => grant({ txRequestHash: ok.txRequestHash, intentId: ok.intentId })).toThrow(RpcError)
    await expect(grant(ok)).resolves.toEqual({ approvalTokenId: 'x', expiresAt: 0 })
  })
})
