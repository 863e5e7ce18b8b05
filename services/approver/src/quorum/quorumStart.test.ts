import { describe, expect, it } from 'vitest'
import { quorumStartProblem } from './quorumStart.js'

const ok = { required: 2, operatorAuth: true, namedOperators: 3, channels: ['web'] as const }

describe('quorumStartProblem', () => {
  it('no quorum in the policy: any operator setup starts, the single token included', () => {
    expect(quorumStartProblem({ ...ok, required: null, namedOperators: 0 })).toBeNull()
    expect(quorumStartProblem({ ...ok, required: null, operatorAuth: false, channels: ['auto'] })).toBeNull()
  })

  it('enough named operators: starts (web, and web with the terminal)', () => {
    expect(quorumStartProblem(ok)).toBeNull()
    expect(quorumStartProblem({ ...ok, namedOperators: 2, channels: ['web', 'cli', 'webhook'] })).toBeNull()
  })

  it.each([
    [{ namedOperators: 0 }, 'only the single operator token is configured; list at least 2 named operators in SERVICE_OPERATORS_FILE'],
    [{ namedOperators: 1 }, 'SERVICE_OPERATORS_FILE lists only 1; the quorum could never be met'],
    [{ operatorAuth: false }, 'SERVICE_OPERATOR_AUTH=off lets anyone decide'],
    [{ channels: ['auto'] as const }, 'SERVICE_APPROVAL_MODE=auto approves without any operator'],
  ])('refuses %j naming the problem', (change, fragment) => {
    const problem = quorumStartProblem({ ...ok, ...change })
    expect(problem).toContain("the policy's requireQuorumAbove asks for 2 distinct operators")
    expect(problem).toContain(fragment)
  })
})
