import { describe, expect, it } from 'vitest'
import { approvalRequiredBody, policyDeniedBody, simpleErrorBody, skillNotFoundBody, validationErrorBody } from './errorBodies.js'

describe('SPEC error bodies', () => {
  it('policy_denied always carries decision deny, the reasons and the policy version', () => {
    const reasons = ['chain 1 is not allowed']
    const body = policyDeniedBody(reasons)
    expect(body).toEqual({ error: 'policy_denied', decision: 'deny', reasons: ['chain 1 is not allowed'], policyVersion: '1' })
    // A copy: the decision's own array is not shared with the response.
    expect(body.reasons).not.toBe(reasons)
  })

  it('the validation, simple, approval_required and skill_not_found shapes', () => {
    expect(validationErrorBody('body/id must match format "uuid"')).toEqual({ statusCode: 400, error: 'Bad Request', message: 'body/id must match format "uuid"' })
    expect(simpleErrorBody('not_found', 'gone')).toEqual({ error: 'not_found', message: 'gone' })
    expect(approvalRequiredBody('needs a token', '0xab')).toEqual({ error: 'approval_required', message: 'needs a token', txRequestHash: '0xab' })
    expect(approvalRequiredBody('needs a token', undefined)).toEqual({ error: 'approval_required', message: 'needs a token' })
    expect(skillNotFoundBody('greeter')).toEqual({ error: 'skill_not_found', name: 'greeter' })
  })
})
