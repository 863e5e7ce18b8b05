import { describe, expect, it } from 'vitest'
import { defaultPolicyConfig, UINT256_MAX, type PolicyConfig } from '@countersign/shared'
import { actions, makeIntent, ROUTER_BASE, USDC_BASE } from '@countersign/shared/testing/intents'
import { decodeRevertReason } from './revertReason.js'
import { APPROVAL_FACTORS, scoreRisk } from './riskScore.js'
import { findLookalike } from './signals.js'

const policy = (o: Partial<PolicyConfig> = {}): PolicyConfig => ({ ...defaultPolicyConfig(), ...o })
const ids = (r: ReturnType<typeof scoreRisk>) => r.riskFactors.map((f) => f.id)

/** A successful simulation of an exact-in swap that delivers exactly its minAmountOut: its bound holds. */
const delivered = (swap: ReturnType<typeof makeIntent>) => {
  const a = swap.action as { assetOut: { address: string }; minAmountOut: string }
  return [{ token: a.assetOut.address, change: a.minAmountOut }]
}

describe('scoreRisk', () => {
  it('is 0 for a plain transfer under the default policy', () => {
    expect(scoreRisk({ intent: makeIntent(), policy: policy(), contract: USDC_BASE, simulationSuccess: true, gasEstimate: 50_000n })).toEqual({ riskScore: 0, riskFactors: [] })
  })

  it('weights each of the seven factors as DESIGN.md says and caps at 100', () => {
    const p = policy({ contractAllowlist: ['0x0000000000000000000000000000000000000001'], tokenAllowlist: ['0x0000000000000000000000000000000000000002'], maxApprovalAmount: '10' })
    const unlimited = makeIntent({ action: actions.approve(UINT256_MAX.toString()) })
    const r = scoreRisk({ intent: unlimited, policy: p, contract: USDC_BASE, simulationSuccess: false, gasEstimate: 500_000n })
    expect(Object.fromEntries(r.riskFactors.map((f) => [f.id, f.weight]))).toEqual({
      contract_not_allowlisted: 40,
      token_not_allowlisted: 20,
      large_approval: 25,
      simulation_reverted: 50,
      high_gas: 10,
    })
    expect(r.riskScore).toBe(100)
  })

  it('a token claiming a well-known symbol at another address scores lookalike_token_symbol (+30), which needs an operator', () => {
    const swap = makeIntent({ action: actions.swapIn() })
    const r = scoreRisk({ intent: swap, policy: policy(), contract: ROUTER_BASE, simulationSuccess: true, gasEstimate: 100_000n, tokenLookalikes: ['token 0x5F… reports the symbol WETH'], balanceDiffs: delivered(swap) })
    expect(r).toEqual({ riskScore: 30, riskFactors: [{ id: 'lookalike_token_symbol', weight: 30, detail: 'token 0x5F… reports the symbol WETH' }] })
    expect(APPROVAL_FACTORS.has('lookalike_token_symbol')).toBe(true)
  })

  it('a swap bound looser than its declared maxSlippageBps scores slippage_unprotected (+20), which needs an operator', () => {
    // The review's swap: minAmountOut 0 and maxSlippageBps 0, which high_slippage (the declared figure alone) never saw.
    const i = makeIntent({ action: { ...actions.swapIn(), minAmountOut: '0' } as typeof swap.action })
    const swap = { ...i, constraints: { ...i.constraints, maxSlippageBps: 0 } }
    const r = scoreRisk({ intent: swap, policy: policy(), contract: ROUTER_BASE, simulationSuccess: true, gasEstimate: 100_000n, balanceDiffs: [] })
    expect(r.riskFactors).toEqual([{ id: 'slippage_unprotected', weight: 20, detail: 'minAmountOut is 0: the swap accepts any price, whatever maxSlippageBps says' }])
    expect(APPROVAL_FACTORS.has('slippage_unprotected')).toBe(true)
  })

  it('a declared symbol or decimals the chain contradicts scores declared_token_mismatch (DESIGN §6)', () => {
    const r = scoreRisk({ intent: makeIntent(), policy: policy(), contract: USDC_BASE, simulationSuccess: true, gasEstimate: 50_000n, tokenMismatches: ['declared as "USDC" with 12 decimals; on chain "TUSD" with 18 decimals'] })
    expect(r).toEqual({ riskScore: 30, riskFactors: [{ id: 'declared_token_mismatch', weight: 30, detail: 'declared as "USDC" with 12 decimals; on chain "TUSD" with 18 decimals' }] })
  })

  it('a token with code that gave no decimals() scores token_without_decimals (+30), which needs an operator', () => {
    // Found by review: approve(spender, 123456) on an ERC-721 (same selector) hands over item 123456; the card said "123456 units".
    const NFT = '0xC36442b4a4522E871399CD717aBDD847Ab11FE88'
    const approve = makeIntent({ action: { type: 'approve', asset: { kind: 'erc20', address: NFT }, spender: ROUTER_BASE, amount: '123456' } })
    const r = scoreRisk({ intent: approve, policy: policy(), contract: NFT, simulationSuccess: true, gasEstimate: 50_000n, tokensWithoutDecimals: [NFT] })
    expect(r.riskScore).toBe(30)
    expect(r.riskFactors).toEqual([{ id: 'token_without_decimals', weight: 30, detail: expect.stringMatching(new RegExp(`^token ${NFT} did not answer decimals\\(\\) as an ERC-20 token does`)) }])
    expect(APPROVAL_FACTORS.has('token_without_decimals')).toBe(true)
    expect(scoreRisk({ intent: approve, policy: policy(), contract: NFT, simulationSuccess: true, gasEstimate: 50_000n }).riskFactors).toEqual([])
  })

  it('slippage above 300 bps on swaps only', () => {
    const swap = makeIntent({ action: actions.swapIn() })
    swap.constraints.maxSlippageBps = 301
    expect(ids(scoreRisk({ intent: swap, policy: policy(), contract: ROUTER_BASE, simulationSuccess: true, gasEstimate: 100_000n, balanceDiffs: delivered(swap) }))).toEqual(['high_slippage'])
    swap.constraints.maxSlippageBps = 300
    expect(scoreRisk({ intent: swap, policy: policy(), contract: ROUTER_BASE, simulationSuccess: true, gasEstimate: 100_000n, balanceDiffs: delivered(swap) }).riskScore).toBe(0)
  })

  it('value above half the cap, native and per token', () => {
    const r = scoreRisk({ intent: makeIntent({ action: actions.native('501') }), policy: policy({ maxValueWei: '1000' }), contract: null, simulationSuccess: true, gasEstimate: 21_000n })
    expect(r).toMatchObject({ riskScore: 20, riskFactors: [{ id: 'value_near_cap' }] })
    expect(scoreRisk({ intent: makeIntent({ action: actions.native('500') }), policy: policy({ maxValueWei: '1000' }), contract: null, simulationSuccess: true, gasEstimate: 21_000n }).riskScore).toBe(0)
    const t = scoreRisk({ intent: makeIntent({ action: actions.transfer('600') }), policy: policy({ tokenLimits: { [USDC_BASE.toLowerCase()]: { maxAmount: '1000' } } }), contract: USDC_BASE, simulationSuccess: true, gasEstimate: 50_000n })
    expect(ids(t)).toEqual(['value_near_cap'])
  })

  // Found by review: 2^96 - 2, one below the unlimited line, was allowed at risk 0 under unlimitedApprovals "deny".
  it('an approval of at least the token’s whole supply scores approval_covers_supply (+25), which needs an operator', () => {
    const approve = (amount: bigint) => makeIntent({ action: actions.approve(amount.toString()) })
    const supplies = { [USDC_BASE.toLowerCase()]: 10n ** 15n }
    const score = (amount: bigint, tokenSupplies = supplies) => scoreRisk({ intent: approve(amount), policy: defaultPolicyConfig(), contract: USDC_BASE, simulationSuccess: true, gasEstimate: 40_000n, tokenSupplies })
    const covering = score((1n << 96n) - 2n)
    expect(covering.riskFactors).toEqual([
      { id: 'approval_covers_supply', weight: 25, detail: `approval of ${(1n << 96n) - 2n} of token ${USDC_BASE} is at least its whole supply of ${10n ** 15n}: as good as unlimited (the spender can take the balance and every later deposit)` },
    ])
    expect(APPROVAL_FACTORS.has('approval_covers_supply')).toBe(true)
    expect(ids(score(10n ** 15n))).toEqual(['approval_covers_supply'])
    expect(ids(score(10n ** 15n - 1n))).toEqual([])
    // Unread supply, or one of 0 (a token that says nothing exists): no finding from it.
    expect(ids(score((1n << 96n) - 2n, {}))).toEqual([])
    expect(ids(score(5n, { [USDC_BASE.toLowerCase()]: 0n }))).toEqual([])
    // At or above the unlimited line it stays large_approval.
    expect(ids(score((1n << 96n) - 1n))).toEqual(['large_approval'])
  })

  it('an approval above 10x the cap', () => {
    const p = policy({ maxApprovalAmount: '100' })
    expect(ids(scoreRisk({ intent: makeIntent({ action: actions.approve('1001') }), policy: p, contract: USDC_BASE, simulationSuccess: true, gasEstimate: 40_000n }))).toEqual(['large_approval'])
    expect(ids(scoreRisk({ intent: makeIntent({ action: actions.approve('1000') }), policy: p, contract: USDC_BASE, simulationSuccess: true, gasEstimate: 40_000n }))).toEqual([])
  })
})

describe('findLookalike', () => {
  const known = ['0x1234000000000000000000000000000000005678']
  it('flags same first and last four hex characters with a different middle', () => {
    expect(findLookalike('0x1234ffffffffffffffffffffffffffffffff5678', known)).toBe(known[0])
    expect(findLookalike('0x1234FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5678', known)).toBe(known[0])
  })
  it('does not flag the same address or a different one', () => {
    expect(findLookalike(known[0]!.toUpperCase().replace('0X', '0x'), known)).toBeNull()
    expect(findLookalike('0x9234ffffffffffffffffffffffffffffffff5678', known)).toBeNull()
  })
})

describe('decodeRevertReason', () => {
  it('decodes Error(string), Panic(uint256) and names custom errors', () => {
    const tooOld = '0x08c379a0' + '0000000000000000000000000000000000000000000000000000000000000020' + '0000000000000000000000000000000000000000000000000000000000000013' + '5472616e73616374696f6e20746f6f206f6c6400000000000000000000000000'
    expect(decodeRevertReason(tooOld)).toBe('Transaction too old')
    expect(decodeRevertReason('0x4e487b71' + '11'.padStart(64, '0'))).toBe('panic: arithmetic overflow or underflow')
    expect(decodeRevertReason('0xe450d38c' + '00'.repeat(96))).toMatch(/^custom error 0xe450d38c/)
    expect(decodeRevertReason('0x', 'execution reverted')).toBe('execution reverted')
  })
})
