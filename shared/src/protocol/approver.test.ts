import { describe, expect, it } from 'vitest'
import { createAjv } from '../validation.js'
import { approverMethods, verifyOperatorTokenParamsSchema } from './approver.js'

describe('verifyOperatorToken (gateway -> approver)', () => {
  const valid = createAjv().compile(verifyOperatorTokenParamsSchema)

  it('carries the presented bearer value, or null when the client sent none', () => {
    expect(approverMethods.verifyOperatorToken).toBe('verifyOperatorToken')
    expect(valid({ token: 'abc' })).toBe(true)
    expect(valid({ token: null })).toBe(true)
  })

  it('refuses anything else', () => {
    for (const bad of [{}, { token: 1 }, { token: 'x'.repeat(1025) }, { token: 'a', extra: true }, null, 'abc']) expect(valid(bad), JSON.stringify(bad)).toBe(false)
  })
})
