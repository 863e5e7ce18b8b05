import { describe, expect, it } from 'vitest'
import { approverMethods } from '@countersign/shared'
import { approverOperatorAuthority, bearerToken } from './operatorAuthority.js'

describe('bearerToken', () => {
  it('takes the value of a Bearer header and nothing else', () => {
    expect(bearerToken('Bearer abc')).toBe('abc')
    expect(bearerToken('bearer   abc')).toBe('abc')
    expect(bearerToken(undefined)).toBeNull()
    expect(bearerToken('abc')).toBeNull()
    expect(bearerToken('Basic abc')).toBeNull()
    expect(bearerToken('Bearer a b')).toBeNull()
    expect(bearerToken('Bearer ' + 'x'.repeat(1025))).toBeNull()
  })
})

describe('approverOperatorAuthority', () => {
  const asked: unknown[] = []
  const approver = (answer: unknown) => ({
    call: async <T>(method: string, params: unknown): Promise<T> => {
      asked.push({ method, params })
      if (answer instanceof Error) throw answer
      return answer as T
    },
  })

  it('hands the presented token to the approver and follows its answer', async () => {
    asked.length = 0
    const ok = await approverOperatorAuthority(approver({ required: true, valid: true })).check('Bearer t0k', 'revoking a skill')
    expect(ok).toEqual({ ok: true, grant: 'operator_token' })
    expect(asked).toEqual([{ method: approverMethods.verifyOperatorToken, params: { token: 't0k' } }])
    const bad = await approverOperatorAuthority(approver({ required: true, valid: false })).check(undefined, 'revoking a skill')
    expect(bad).toMatchObject({ ok: false, status: 401, error: 'operator_auth_required', message: expect.stringMatching(/^revoking a skill needs the operator token/) })
    expect(asked[1]).toEqual({ method: approverMethods.verifyOperatorToken, params: { token: null } })
    expect(await approverOperatorAuthority(approver({ required: false, valid: true })).check(undefined, 'x')).toEqual({ ok: true, grant: 'operator_auth_off' })
  })

  it('fails closed with 503 when the approver cannot be asked', async () => {
    const r = await approverOperatorAuthority(approver(new Error('connect ENOENT'))).check('Bearer t0k', 'registering a skill')
    expect(r).toMatchObject({ ok: false, status: 503, error: 'approver_unavailable' })
  })
})
