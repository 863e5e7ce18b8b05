import { describe, expect, it } from 'vitest'
import { createAjv } from '../validation.js'
import { makeIntent } from '../server/testing/intents.js'
import { noPreflight, requestApprovalParamsSchema, type RequestApprovalParams } from './approver.js'
import { clipText, fitApprovalParams } from './fitApprovalParams.js'

const validate = createAjv().compile(requestApprovalParamsSchema)
const token = '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913'

describe('fitApprovalParams', () => {
  it('brings what a chosen contract can make too large within the schema the approver checks, marking what it cut', () => {
    const long = 'r'.repeat(5000)
    const params: RequestApprovalParams = {
      intent: makeIntent(),
      preflight: {
        ...noPreflight(),
        riskScore: 50,
        riskFactors: Array.from({ length: 70 }, (_, i) => ({ id: `f${i}`.repeat(40), weight: 1, detail: long })),
        warnings: Array.from({ length: 70 }, () => `reverted: ${long}`),
        balanceDiffs: [{ token, change: '9'.repeat(79) }, ...Array.from({ length: 70 }, () => ({ token, change: '-5' }))],
        gasEstimate: '1'.repeat(21),
      },
      policyReasons: Array.from({ length: 40 }, () => long),
      tokenFacts: [...Array.from({ length: 5 }, () => ({ address: token, symbol: 'U'.repeat(300), decimals: 6 })), { address: token, symbol: null, decimals: 300 }],
    }
    expect(validate(params)).toBe(false)
    const fitted = fitApprovalParams(params)
    expect(validate(fitted), JSON.stringify(validate.errors)).toBe(true)
    expect(fitted.preflight.warnings).toHaveLength(64)
    expect(fitted.preflight.warnings[0]).toHaveLength(1024)
    expect(fitted.preflight.warnings[0]!.endsWith('…')).toBe(true)
    expect(fitted.preflight.riskFactors[0]!.detail.endsWith('…')).toBe(true)
    // A change no int256 can hold is dropped, not cut (a cut number would be another number).
    expect(fitted.preflight.balanceDiffs).toHaveLength(64)
    expect(fitted.preflight.balanceDiffs.every((d) => d.change === '-5')).toBe(true)
    expect(fitted.preflight.gasEstimate).toBeNull()
    expect(fitted.policyReasons).toHaveLength(32)
    expect(fitted.tokenFacts).toHaveLength(4)
    expect(fitted.tokenFacts![0]!.symbol).toBe(`${'U'.repeat(255)}…`)
  })

  it('leaves params already within bounds as they were', () => {
    const params: RequestApprovalParams = {
      intent: makeIntent(),
      preflight: { ...noPreflight(), riskScore: 10, warnings: ['w'], riskFactors: [{ id: 'x', weight: 10, detail: 'd' }], balanceDiffs: [{ token, change: '-1' }], gasEstimate: '21000' },
      policyReasons: ['value above threshold'],
      tokenFacts: [{ address: token, symbol: 'USDC', decimals: 6 }],
      skill: 'payer',
    }
    expect(fitApprovalParams(params)).toEqual(params)
  })

  it('clipText never splits a surrogate pair', () => {
    expect(clipText('ab😀cd', 4)).toBe('ab…')
    expect(clipText('abc😀', 5)).toBe('abc😀')
    expect(clipText('abcd', 4)).toBe('abcd')
  })
})
