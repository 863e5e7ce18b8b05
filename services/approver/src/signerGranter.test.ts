import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { signerMethods } from '@countersign/shared'
import { GrantAnswerError, signerGranter } from './signerGranter.js'

const binding = { txRequestHash: `0x${'11'.repeat(32)}`, intentHash: `0x${'22'.repeat(32)}`, intentId: randomUUID() } as const

function signerAnswering(answer: unknown) {
  const calls: string[] = []
  return { calls, signer: { call: async <T>(method: string): Promise<T> => (calls.push(method), (method === signerMethods.grantApproval ? answer : {}) as T) } }
}

describe('signerGranter', () => {
  it('passes a token id and its expiry on as the signer gave them', async () => {
    const good = { approvalTokenId: randomUUID(), expiresAt: 1_800_000_000_000 }
    const { signer, calls } = signerAnswering(good)
    await expect(signerGranter(signer).grant(binding)).resolves.toEqual(good)
    await signerGranter(signer).durable()
    expect(calls).toEqual([signerMethods.grantApproval, signerMethods.grantsDurable])
  })

  it.each([
    ['null', null],
    ['no expiry', { approvalTokenId: randomUUID() }],
    ['a token id that is not one', { approvalTokenId: 'x', expiresAt: 1 }],
    ['an expiry that is text', { approvalTokenId: randomUUID(), expiresAt: 'soon' }],
  ])('refuses an answer with %s: never recorded or handed on', async (_what, answer) => {
    const { signer } = signerAnswering(answer)
    await expect(signerGranter(signer).grant(binding)).rejects.toBeInstanceOf(GrantAnswerError)
  })
})
