import { describe, expect, it } from 'vitest'
import { ACTION_SPECS } from '../actions/index.js'
import { actions, makeIntent, USDC_BASE } from '../server/testing/intents.js'
import type { Action, PolicyConfig, QuorumRule } from '../types.js'
import { defaultPolicyConfig } from './defaults.js'
import { evaluatePolicy } from './evaluatePolicy.js'
import { parsePolicyConfig } from './loadPolicy.js'
import { quorumFor } from './quorum.js'

const NOW = Date.UTC(2026, 10, 22, 12)
const usdc = USDC_BASE.toLowerCase()
const rule = (o: Partial<QuorumRule> = {}): QuorumRule => ({ valueWei: '1000', tokens: { [usdc]: '2000000' }, approvals: 2, ...o })
const cfg = (o: Partial<PolicyConfig> = {}): PolicyConfig => ({ ...defaultPolicyConfig(), requireQuorumAbove: rule(), ...o })
const intentOf = (action: Action) => makeIntent({ nowMs: NOW, action })

describe('quorumFor', () => {
  it('no rule: nothing needs a quorum', () => {
    expect(quorumFor({ requireQuorumAbove: null }, intentOf(actions.native('10000000')))).toBeNull()
  })

  it('native value above valueWei needs the quorum; at the figure it does not', () => {
    expect(quorumFor(cfg(), intentOf(actions.native('1000')))).toBeNull()
    expect(quorumFor(cfg(), intentOf(actions.native('1001')))).toEqual({
      approvals: 2,
      reasons: ['value 1001 wei is above the quorum threshold of 1000 wei: needs 2 operators'],
    })
    expect(quorumFor(cfg({ requireQuorumAbove: rule({ valueWei: null }) }), intentOf(actions.native('10000000')))).toBeNull()
  })

  it('a token amount above its own figure needs the quorum; a token without a figure never does', () => {
    expect(quorumFor(cfg(), intentOf(actions.transfer('2000000')))).toBeNull()
    expect(quorumFor(cfg(), intentOf(actions.transfer('2000001')))?.approvals).toBe(2)
    expect(quorumFor(cfg({ requireQuorumAbove: rule({ tokens: {} }) }), intentOf(actions.transfer('9999999999')))).toBeNull()
  })

  it('finds the figure whatever the spelling of the key (a config built in code)', () => {
    const mixed = rule({ tokens: { [USDC_BASE]: '1' }, approvals: 3 })
    expect(quorumFor({ requireQuorumAbove: mixed }, intentOf(actions.transfer('2')))?.approvals).toBe(3)
  })

  it('an approve (allowance to a spender) and a swap count like transfers: no action type is a side door', () => {
    expect(quorumFor(cfg(), intentOf(actions.approve('2000001')))?.reasons[0]).toMatch(/^approval amount 2000001 of token .* is above the quorum threshold of 2000000/)
    expect(quorumFor(cfg(), intentOf(actions.approve(String(2n ** 256n - 1n))))?.approvals).toBe(2)
    expect(quorumFor(cfg({ requireQuorumAbove: rule({ tokens: { [usdc]: '999999' } }) }), intentOf(actions.swapIn()))?.approvals).toBe(2)
    // swap_exact_out: the ceiling of what may leave (maxAmountIn 5000000) is measured.
    expect(quorumFor(cfg({ requireQuorumAbove: rule({ tokens: { [usdc]: '4999999' } }) }), intentOf(actions.swapOut()))?.approvals).toBe(2)
    expect(quorumFor(cfg({ requireQuorumAbove: rule({ tokens: { [usdc]: '5000000' } }) }), intentOf(actions.swapOut()))).toBeNull()
  })

  it('every action type with an outflow of value can reach the quorum', () => {
    const every = { valueWei: '0', tokens: { [usdc]: '0' }, approvals: 2 }
    const samples = [actions.transfer(), actions.native(), actions.approve(), actions.swapIn(), actions.swapOut()]
    expect(new Set(samples.map((a) => a.type))).toEqual(new Set(Object.keys(ACTION_SPECS)))
    for (const a of samples) expect(quorumFor({ requireQuorumAbove: every }, intentOf(a)), a.type).not.toBeNull()
  })

  it('evaluatePolicy sends a request over the quorum figure to approval even when requireApprovalAbove would allow it', () => {
    const c = cfg({ requireApprovalAbove: { valueWei: '1000000000000000000000' } })
    const ctx = { nowMs: NOW, recentTxCount: 0, contract: null }
    expect(evaluatePolicy(c, intentOf(actions.native('1000')), ctx).decision).toBe('allow')
    const d = evaluatePolicy(c, intentOf(actions.native('1001')), ctx)
    expect(d).toMatchObject({ decision: 'require_approval', reasonCodes: ['quorum_required'] })
    // A deny still wins.
    expect(evaluatePolicy({ ...c, maxValueWei: '1000' }, intentOf(actions.native('1001')), ctx).decision).toBe('deny')
  })
})

describe('policy file: requireQuorumAbove', () => {
  it('is read with lowercase token keys; absent means null', () => {
    expect(parsePolicyConfig({}).requireQuorumAbove).toBeNull()
    expect(parsePolicyConfig({ requireQuorumAbove: { valueWei: '5', tokens: { [USDC_BASE]: '7' }, approvals: 2 } }).requireQuorumAbove).toEqual({
      valueWei: '5',
      tokens: { [usdc]: '7' },
      approvals: 2,
    })
    expect(parsePolicyConfig({ requireQuorumAbove: { tokens: { [usdc]: '7' }, approvals: 3 } }).requireQuorumAbove?.valueWei).toBeNull()
  })

  it.each([
    [{ valueWei: '5' }, "policy/requireQuorumAbove must have required property 'approvals'"],
    [{ valueWei: '5', approvals: 1 }, 'policy/requireQuorumAbove/approvals must be >= 2'],
    [{ valueWei: '5', approvals: 101 }, 'policy/requireQuorumAbove/approvals must be <= 100'],
    [{ valueWei: '5', approvals: 2.5 }, 'policy/requireQuorumAbove/approvals must be integer'],
    [{ valueWei: 5, approvals: 2 }, 'policy/requireQuorumAbove/valueWei must be string'],
    [{ valueWei: '-1', approvals: 2 }, 'policy/requireQuorumAbove/valueWei must match pattern'],
    [{ tokens: { usdc: '1' }, approvals: 2 }, "policy/requireQuorumAbove/tokens must NOT have additional property 'usdc'"],
    [{ tokens: { [usdc]: 1 }, approvals: 2 }, `policy/requireQuorumAbove/tokens/${usdc} must be string`],
    [{ valueWei: '5', approvals: 2, quorum: 2 }, "policy/requireQuorumAbove must NOT have additional property 'quorum'"],
    [{ approvals: 2 }, 'policy/requireQuorumAbove must have valueWei or at least one token in tokens'],
    [{ tokens: {}, approvals: 2 }, 'policy/requireQuorumAbove must have valueWei or at least one token in tokens'],
    [{ tokens: { [usdc]: '1', [USDC_BASE]: '2' }, approvals: 2 }, `policy/requireQuorumAbove/tokens has token ${usdc} more than once`],
    ['2', 'policy/requireQuorumAbove must be object'],
  ])('refuses requireQuorumAbove %j with a clear error', (requireQuorumAbove, fragment) => {
    expect(() => parsePolicyConfig({ requireQuorumAbove }, 'policy file p.json')).toThrow(`policy file p.json: ${fragment}`)
  })
})
