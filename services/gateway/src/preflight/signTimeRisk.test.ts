import { describe, expect, it } from 'vitest'
import { buildTransaction, defaultPolicyConfig, defaultRouterTable } from '@countersign/shared'
import { actions, makeIntent, USDC_BASE, WETH_BASE } from '@countersign/shared/testing/intents'
import { createRecentPreflights, type SimulationFacts } from './recentPreflights.js'
import { createSignTimeRisk } from './signTimeRisk.js'
import { requireApprovalForRisk } from '../pipeline/policyGate.js'

const routers = defaultRouterTable()
const unlimited = makeIntent({ action: actions.approve(((1n << 256n) - 1n).toString()) })

function setup(simulate: () => Promise<SimulationFacts>) {
  const recent = createRecentPreflights(() => 0)
  let runs = 0
  const assess = createSignTimeRisk({
    recent,
    simulate: async () => {
      runs++
      return simulate()
    },
    policy: defaultPolicyConfig(),
    routers,
  })
  return { recent, assess, runs: () => runs }
}

describe('risk at sign time', () => {
  it('reuses a recent simulation of the same transaction and scores the intent being signed', async () => {
    const s = setup(async () => ({ simulationSuccess: true, gasEstimate: 1n, tokens: [], lookalikes: [], balanceDiffs: null }))
    const built = buildTransaction(unlimited, routers)
    s.recent.remember(built.txRequestHash, { simulationSuccess: true, gasEstimate: 500_000n, tokens: [], lookalikes: [], balanceDiffs: [] })
    const r = await s.assess(unlimited, built)
    expect(s.runs()).toBe(0)
    expect(r).toMatchObject({ reused: true, simulationSuccess: true, riskScore: 25 + 10 })
    expect(r.riskFactors.map((f) => f.id)).toEqual(['large_approval', 'high_gas'])
  })

  // Found by two reviews: a swap preflighted before its router allowance was mined reverted; within 120 s,
  // once the allowance had landed, sign-and-send reused that revert (score 50, not above maxRiskScore 50,
  // no balance changes to hold minAmountOut 1 wei to) and signed and broadcast it without an operator.
  it('does not reuse a simulation that reverted: it simulates again, and holds the bound to what it finds', async () => {
    const swap = makeIntent({ action: { ...actions.swapIn(), minAmountOut: '1' } as ReturnType<typeof makeIntent>['action'] })
    const intent = { ...swap, constraints: { ...swap.constraints, maxSlippageBps: 50 } }
    const built = buildTransaction(intent, routers)
    const s = setup(async () => ({ simulationSuccess: true, gasEstimate: 150_000n, tokens: [], lookalikes: [], balanceDiffs: [{ token: WETH_BASE, change: '1000000000000000000' }] }))
    s.recent.remember(built.txRequestHash, { simulationSuccess: false, gasEstimate: 30_000n, tokens: [], lookalikes: [], balanceDiffs: null })
    const r = await s.assess(intent, built)
    expect(s.runs()).toBe(1)
    expect(r).toMatchObject({ reused: false, simulationSuccess: true })
    expect(r.riskFactors.map((f) => f.id)).toEqual(['slippage_unprotected'])
  })

  it('a swap whose simulation reverts now as well has a bound nobody checked: an operator must look', async () => {
    const swap = makeIntent({ action: { ...actions.swapIn(), minAmountOut: '1' } as ReturnType<typeof makeIntent>['action'] })
    const intent = { ...swap, constraints: { ...swap.constraints, maxSlippageBps: 50 } }
    const s = setup(async () => ({ simulationSuccess: false, gasEstimate: 30_000n, tokens: [], lookalikes: [], balanceDiffs: null }))
    const r = await s.assess(intent, buildTransaction(intent, routers))
    expect(r.riskFactors.map((f) => f.id).sort()).toEqual(['simulation_reverted', 'slippage_unprotected'])
    expect(requireApprovalForRisk({ decision: 'allow', reasons: [], reasonCodes: [], policyVersion: '1' }, r.riskFactors).decision).toBe('require_approval')
  })

  it('simulates when nothing recent is known; a failing node means no simulation (null), not an error', async () => {
    const ok = setup(async () => ({ simulationSuccess: true, gasEstimate: 40_000n, tokens: [], lookalikes: [], balanceDiffs: null }))
    const intent = makeIntent()
    expect(await ok.assess(intent, buildTransaction(intent, routers))).toEqual({ riskScore: 0, riskFactors: [], simulationSuccess: true, reused: false })
    expect(ok.runs()).toBe(1)
    const down = setup(async () => {
      throw new Error('connection refused')
    })
    expect(await down.assess(intent, buildTransaction(intent, routers))).toEqual({ riskScore: 0, riskFactors: [], simulationSuccess: null, reused: false })
  })

  it("checks the signing intent's declared symbol against the chain's, even when the simulation is reused", async () => {
    const s = setup(async () => ({ simulationSuccess: true, gasEstimate: 1n, tokens: [], lookalikes: [], balanceDiffs: null }))
    const honest = makeIntent()
    const built = buildTransaction(honest, routers)
    s.recent.remember(built.txRequestHash, { simulationSuccess: true, gasEstimate: 50_000n, tokens: [{ address: USDC_BASE, symbol: 'USDC', decimals: 6 }], lookalikes: [], balanceDiffs: null })
    expect((await s.assess(honest, built)).riskScore).toBe(0)
    // Same transaction (declared symbols are not in it), another claim about the token.
    const liar = { ...honest, action: { ...honest.action, asset: { kind: 'erc20', address: USDC_BASE, symbol: 'WETH', decimals: 6 } } } as typeof honest
    expect(buildTransaction(liar, routers).txRequestHash).toBe(built.txRequestHash)
    const r = await s.assess(liar, built)
    expect(r.riskFactors.map((f) => f.id)).toEqual(['declared_token_mismatch'])
    expect(s.runs()).toBe(0)
  })

  it('keeps a lookalike token found by the preflight when sign-and-send reuses its simulation', async () => {
    const s = setup(async () => ({ simulationSuccess: true, gasEstimate: 1n, tokens: [], lookalikes: [], balanceDiffs: null }))
    const swap = makeIntent({ action: actions.swapIn() })
    const built = buildTransaction(swap, routers)
    s.recent.remember(built.txRequestHash, { simulationSuccess: true, gasEstimate: 100_000n, tokens: [], lookalikes: ['token 0x5F… reports the symbol WETH'], balanceDiffs: null })
    expect((await s.assess(swap, built)).riskFactors.map((f) => f.id)).toContain('lookalike_token_symbol')
  })

  it('finds a token without decimals() in the reused facts, as the preflight did', async () => {
    const NFT = '0xC36442b4a4522E871399CD717aBDD847Ab11FE88'
    const approve = makeIntent({ action: { type: 'approve', asset: { kind: 'erc20', address: NFT }, spender: WETH_BASE, amount: '123456' } })
    const built = buildTransaction(approve, routers)
    const s = setup(async () => ({ simulationSuccess: true, gasEstimate: 1n, tokens: [], lookalikes: [], balanceDiffs: [] }))
    s.recent.remember(built.txRequestHash, { simulationSuccess: true, gasEstimate: 50_000n, tokens: [{ address: NFT, symbol: 'UNI-V3-POS', decimals: null }], lookalikes: [], balanceDiffs: [] })
    expect((await s.assess(approve, built)).riskFactors.map((f) => f.id)).toEqual(['token_without_decimals'])
  })

  it('holds the signing intent’s own maxSlippageBps to the reused simulation’s amounts', async () => {
    const s = setup(async () => ({ simulationSuccess: true, gasEstimate: 1n, tokens: [], lookalikes: [], balanceDiffs: null }))
    const i = makeIntent({ action: { ...actions.swapIn(), minAmountOut: '990000' } as ReturnType<typeof makeIntent>['action'] })
    const tolerant = { ...i, constraints: { ...i.constraints, maxSlippageBps: 100 } }
    const built = buildTransaction(tolerant, routers)
    s.recent.remember(built.txRequestHash, { simulationSuccess: true, gasEstimate: 100_000n, tokens: [], lookalikes: [], balanceDiffs: [{ token: WETH_BASE, change: '1000000' }] })
    expect((await s.assess(tolerant, built)).riskFactors).toEqual([])
    // The same transaction, declared with a tolerance of 0: the bound no longer matches its words.
    const strict = { ...tolerant, constraints: { ...tolerant.constraints, maxSlippageBps: 0 } }
    expect((await s.assess(strict, built)).riskFactors.map((f) => f.id)).toEqual(['slippage_unprotected'])
    expect(s.runs()).toBe(0)
  })
})
