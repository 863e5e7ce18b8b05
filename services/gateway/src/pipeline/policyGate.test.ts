import { describe, expect, it } from 'vitest'
import type { PolicyDecision, RiskFactor } from '@countersign/shared'
import { applyPreflightRules, requireApprovalForRisk } from './policyGate.js'

const decision = (d: PolicyDecision['decision'], reasons: string[] = [], reasonCodes: string[] = []): PolicyDecision => ({ decision: d, reasons, reasonCodes, policyVersion: '1' })
const lookalike: RiskFactor = { id: 'lookalike_token_symbol', weight: 30, detail: 'token 0x5F… reports the symbol WETH' }
const gas: RiskFactor = { id: 'high_gas', weight: 10, detail: 'gas estimate 500000 is above 400000' }

describe('requireApprovalForRisk', () => {
  it('turns an allow into require_approval when a factor needs an operator, with its detail as the reason', () => {
    expect(requireApprovalForRisk(decision('allow'), [gas, lookalike])).toEqual(
      decision('require_approval', ['token 0x5F… reports the symbol WETH; approval required'], ['lookalike_token_symbol']),
    )
  })

  it('leaves other factors to the score (maxRiskScore), and a deny a deny', () => {
    expect(requireApprovalForRisk(decision('allow'), [gas])).toEqual(decision('allow'))
    expect(requireApprovalForRisk(decision('deny', ['no'], ['x']), [lookalike])).toEqual(decision('deny', ['no'], ['x']))
  })

  it('adds its reason to a decision that already requires approval (the card says why)', () => {
    const d = requireApprovalForRisk(decision('require_approval', ['threshold'], ['t']), [lookalike])
    expect(d.reasons).toEqual(['threshold', 'token 0x5F… reports the symbol WETH; approval required'])
    expect(d.reasonCodes).toEqual(['t', 'lookalike_token_symbol'])
  })
})

describe('applyPreflightRules', () => {
  it('requires approval when nothing was simulated, and adds the risk factors that need an operator', () => {
    const d = applyPreflightRules(decision('allow'), { simulationSuccess: null, riskFactors: [lookalike] })
    expect(d.decision).toBe('require_approval')
    expect(d.reasonCodes).toEqual(['simulation_unavailable', 'lookalike_token_symbol'])
  })
  it('leaves an allow with a simulation and no such factor alone, and a deny a deny', () => {
    expect(applyPreflightRules(decision('allow'), { simulationSuccess: true, riskFactors: [gas] })).toEqual(decision('allow'))
    expect(applyPreflightRules(decision('deny', ['no'], ['x']), { simulationSuccess: null, riskFactors: [lookalike] })).toEqual(decision('deny', ['no'], ['x']))
  })
})
