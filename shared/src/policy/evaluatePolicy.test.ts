import { describe, expect, it } from 'vitest'
import { actions, makeIntent, RECIPIENT, ROUTER_BASE, USDC_BASE, WETH_BASE } from '../server/testing/intents.js'
import type { PolicyConfig, SwapExactInAction, SwapExactOutAction, TxIntent } from '../types.js'
import { defaultPolicyConfig } from './defaults.js'
import { evaluatePolicy, isWithinDeadline, tokenLimitFor, type PolicyContext } from './evaluatePolicy.js'

const NOW = Date.UTC(2026, 10, 22, 12)
const cfg = (o: Partial<PolicyConfig> = {}): PolicyConfig => ({ ...defaultPolicyConfig(), ...o })
const ctx = (o: Partial<PolicyContext> = {}): PolicyContext => ({ nowMs: NOW, recentTxCount: 0, contract: null, ...o })
const intent = (o: Parameters<typeof makeIntent>[0] = {}): TxIntent => makeIntent({ nowMs: NOW, ...o })
const upper = (a: string) => `0x${a.slice(2).toUpperCase()}`

describe('evaluatePolicy', () => {
  it('defaults: an ERC-20 transfer is allowed, any native value needs approval', () => {
    expect(evaluatePolicy(cfg(), intent(), ctx({ contract: USDC_BASE }))).toEqual({ decision: 'allow', reasons: [], reasonCodes: [], policyVersion: '1' })
    const d = evaluatePolicy(cfg(), intent({ action: actions.native('1') }), ctx())
    expect(d.decision).toBe('require_approval')
    expect(d.reasonCodes).toEqual(['value_above_approval_threshold'])
    expect(evaluatePolicy(cfg(), intent({ action: actions.native('0') }), ctx()).decision).toBe('allow')
  })

  it('chain not allowed', () => {
    const d = evaluatePolicy(cfg({ allowedChains: [1, 10] }), intent(), ctx())
    expect(d).toMatchObject({ decision: 'deny', reasonCodes: ['chain_not_allowed'] })
    expect(d.reasons[0]).toBe('chain 8453 is not in the allowed chains (1, 10)')
  })

  it('token allowlist covers every token of the action, case-insensitively', () => {
    const c = cfg({ tokenAllowlist: [upper(USDC_BASE) as `0x${string}`] })
    expect(evaluatePolicy(c, intent(), ctx()).decision).toBe('allow')
    const swap = evaluatePolicy(c, intent({ action: actions.swapIn() }), ctx())
    expect(swap).toMatchObject({ decision: 'deny', reasonCodes: ['token_not_in_allowlist'] })
    expect(swap.reasons[0]).toContain(WETH_BASE)
    // Empty allowlists are not enforced.
    expect(evaluatePolicy(cfg(), intent({ action: actions.swapIn() }), ctx()).decision).toBe('allow')
  })

  it('contract allowlist applies to the called contract', () => {
    const c = cfg({ contractAllowlist: [ROUTER_BASE.toLowerCase() as `0x${string}`] })
    expect(evaluatePolicy(c, intent({ action: actions.swapIn() }), ctx({ contract: ROUTER_BASE })).decision).toBe('allow')
    expect(evaluatePolicy(c, intent(), ctx({ contract: USDC_BASE }))).toMatchObject({ decision: 'deny', reasonCodes: ['contract_not_in_allowlist'] })
    // A native transfer calls no contract.
    expect(evaluatePolicy(c, intent({ action: actions.native('0') }), ctx()).decision).toBe('allow')
  })

  it('recipient allowlist applies to transfers', () => {
    const c = cfg({ recipientAllowlist: ['0x9999999999999999999999999999999999999999'] })
    expect(evaluatePolicy(c, intent(), ctx())).toMatchObject({ decision: 'deny', reasonCodes: ['recipient_not_in_allowlist'] })
    expect(evaluatePolicy(c, intent({ action: actions.native('0') }), ctx()).reasons[0]).toContain(RECIPIENT)
    expect(evaluatePolicy(cfg({ recipientAllowlist: [upper(RECIPIENT) as `0x${string}`] }), intent(), ctx()).decision).toBe('allow')
  })

  it('native value cap', () => {
    const c = cfg({ maxValueWei: '1000' })
    expect(evaluatePolicy(c, intent({ action: actions.native('1000') }), ctx()).decision).toBe('require_approval')
    const d = evaluatePolicy(c, intent({ action: actions.native('1001') }), ctx())
    expect(d).toMatchObject({ decision: 'deny', reasonCodes: ['value_exceeds_max'] })
    expect(d.reasons[0]).toBe('value 1001 wei exceeds the maximum of 1000 wei')
  })

  it('per-token limits: max amount and approval threshold, keys in any case', () => {
    const c = cfg({ tokenLimits: { [USDC_BASE.toLowerCase()]: { maxAmount: '10000000', requireApprovalAbove: '1000000' } } })
    expect(evaluatePolicy(c, intent({ action: actions.transfer('1000000') }), ctx()).decision).toBe('allow')
    expect(evaluatePolicy(c, intent({ action: actions.transfer('1000001') }), ctx())).toMatchObject({
      decision: 'require_approval',
      reasonCodes: ['token_amount_above_approval_threshold'],
    })
    expect(evaluatePolicy(c, intent({ action: actions.transfer('10000001') }), ctx())).toMatchObject({ decision: 'deny', reasonCodes: ['value_exceeds_max'] })
    // A swap spends assetIn: the limit applies to amountIn.
    expect(evaluatePolicy(c, intent({ action: { ...actions.swapIn(), amountIn: '20000000' } as never }), ctx()).decision).toBe('deny')
    // Native caps do not apply to token amounts.
    expect(evaluatePolicy(cfg({ maxValueWei: '1' }), intent({ action: actions.transfer('999999999') }), ctx()).decision).toBe('allow')
  })

  it('token limit keys match in any case, even in a config built in code', () => {
    const c = cfg({ tokenLimits: { [upper(USDC_BASE)]: { maxAmount: '10' } } })
    expect(tokenLimitFor(c, USDC_BASE.toLowerCase())).toEqual({ maxAmount: '10' })
    expect(tokenLimitFor(c, WETH_BASE)).toBeUndefined()
    expect(evaluatePolicy(c, intent({ action: actions.transfer('11') }), ctx()).reasonCodes).toEqual(['value_exceeds_max'])
  })

  it('swap_exact_out is limited by maxAmountIn of assetIn', () => {
    const c = cfg({ tokenLimits: { [USDC_BASE]: { maxAmount: '4999999' } } })
    const d = evaluatePolicy(c, intent({ action: actions.swapOut() }), ctx())
    expect(d).toMatchObject({ decision: 'deny', reasonCodes: ['value_exceeds_max'] })
    expect(d.reasons[0]).toBe(`amount 5000000 of token ${USDC_BASE} exceeds the maximum of 4999999`)
  })

  it('require_approval lists only approval reasons', () => {
    const c = cfg({ tokenLimits: { [USDC_BASE]: { requireApprovalAbove: '1' } } })
    const d = evaluatePolicy(c, intent({ action: actions.swapIn() }), ctx({ contract: ROUTER_BASE }))
    expect(d).toEqual({
      decision: 'require_approval',
      reasons: [`amount 1000000 of token ${USDC_BASE} is above the approval threshold of 1`],
      reasonCodes: ['token_amount_above_approval_threshold'],
      policyVersion: '1',
    })
  })

  it('isWithinDeadline: a deadline equal to now (in seconds) has passed', () => {
    expect(isWithinDeadline(1000, 999_999)).toBe(true)
    expect(isWithinDeadline(1000, 1_000_000)).toBe(false)
    expect(isWithinDeadline(1000, 1_000_999)).toBe(false)
  })

  it('approval caps, global and per token', () => {
    expect(evaluatePolicy(cfg({ maxApprovalAmount: '100' }), intent({ action: actions.approve('101') }), ctx())).toMatchObject({
      decision: 'deny',
      reasonCodes: ['approval_exceeds_max'],
    })
    expect(evaluatePolicy(cfg({ maxApprovalAmount: '100' }), intent({ action: actions.approve('100') }), ctx()).decision).toBe('allow')
    const perToken = cfg({ tokenLimits: { [USDC_BASE.toLowerCase()]: { maxApprovalAmount: '5' } } })
    expect(evaluatePolicy(perToken, intent({ action: actions.approve('6') }), ctx()).reasonCodes).toEqual(['approval_exceeds_max'])
  })

  it('rate limit: a count equal to the limit denies, one below allows', () => {
    expect(evaluatePolicy(cfg(), intent(), ctx({ recentTxCount: 9 })).decision).toBe('allow')
    const d = evaluatePolicy(cfg(), intent(), ctx({ recentTxCount: 10 }))
    expect(d).toMatchObject({ decision: 'deny', reasonCodes: ['rate_limit_exceeded'] })
    expect(d.reasons[0]).toBe('rate limit exceeded: 10 transactions in the last hour, limit 10')
    const two = cfg({ maxTxPerHour: 2 })
    expect(evaluatePolicy(two, intent(), ctx({ recentTxCount: 1 })).decision).toBe('allow')
    expect(evaluatePolicy(two, intent(), ctx({ recentTxCount: 2 })).reasons).toEqual(['rate limit exceeded: 2 transactions in the last hour, limit 2'])
  })

  it('risk score above the ceiling denies; at the ceiling it does not', () => {
    expect(evaluatePolicy(cfg(), intent(), ctx({ riskScore: 50 })).decision).toBe('allow')
    expect(evaluatePolicy(cfg(), intent(), ctx({ riskScore: 51 }))).toMatchObject({ decision: 'deny', reasonCodes: ['risk_score_too_high'] })
  })

  it('a deadline at or before now denies and names the deadline', () => {
    const deadline = Math.floor(NOW / 1000)
    const d = evaluatePolicy(cfg(), intent({ deadline }), ctx())
    expect(d).toMatchObject({ decision: 'deny', reasonCodes: ['deadline_passed'] })
    expect(d.reasons[0]).toContain(String(deadline))
    expect(evaluatePolicy(cfg(), intent({ deadline: deadline + 1 }), ctx()).decision).toBe('allow')
  })

  it('deny beats require_approval and lists only deny reasons; all deny reasons are reported', () => {
    const d = evaluatePolicy(cfg({ allowedChains: [1], maxValueWei: '5' }), intent({ action: actions.native('6') }), ctx({ recentTxCount: 99 }))
    expect(d.decision).toBe('deny')
    expect(d.reasonCodes).toEqual(['chain_not_allowed', 'value_exceeds_max', 'rate_limit_exceeded'])
    expect(d.reasons).toHaveLength(3)
  })
  describe('approvals are outflows to their spender', () => {
    const STRANGER = '0x5555555555555555555555555555555555555555' as const
    const UNLIMITED = ((1n << 256n) - 1n).toString()
    const approveTo = (spender: `0x${string}`, amount: string) => intent({ action: { ...actions.approve(amount), spender } as never })
    // The attack: one allowlisted recipient, TUSD capped at 100 per transfer.
    const attackPolicy = cfg({ recipientAllowlist: [RECIPIENT], tokenLimits: { [USDC_BASE.toLowerCase()]: { maxAmount: '100000000' } } })

    it('the attack: an unlimited approval to a stranger is denied for the spender and for the amount', () => {
      const d = evaluatePolicy(attackPolicy, approveTo(STRANGER, UNLIMITED), ctx({ contract: USDC_BASE }))
      expect(d.decision).toBe('deny')
      expect(d.reasonCodes).toEqual(['recipient_not_in_allowlist', 'approval_exceeds_max'])
      expect(d.reasons).toEqual([
        `spender ${STRANGER} is not in the recipient allowlist or the contract allowlist`,
        `approval amount ${UNLIMITED} of token ${USDC_BASE} exceeds the maximum of 100000000`,
      ])
      // Within the limit, to a stranger: still denied; to the allowlisted one: allowed.
      expect(evaluatePolicy(attackPolicy, approveTo(STRANGER, '1000000'), ctx()).reasonCodes).toEqual(['recipient_not_in_allowlist'])
      expect(evaluatePolicy(attackPolicy, approveTo(RECIPIENT, '100000000'), ctx()).decision).toBe('allow')
      expect(evaluatePolicy(attackPolicy, approveTo(RECIPIENT, '100000001'), ctx()).reasonCodes).toEqual(['approval_exceeds_max'])
    })

    it('a spender in the contract allowlist passes the recipient allowlist', () => {
      const c = cfg({ recipientAllowlist: [RECIPIENT], contractAllowlist: [ROUTER_BASE, USDC_BASE] })
      expect(evaluatePolicy(c, approveTo(ROUTER_BASE, '5'), ctx({ contract: USDC_BASE })).decision).toBe('allow')
      // A transfer recipient does not get that pass.
      const t = intent({ action: { ...actions.transfer('5'), to: ROUTER_BASE } as never })
      expect(evaluatePolicy(c, t, ctx({ contract: USDC_BASE })).reasonCodes).toEqual(['recipient_not_in_allowlist'])
    })

    it('an approve above the token threshold needs approval', () => {
      const c = cfg({ tokenLimits: { [USDC_BASE]: { requireApprovalAbove: '10' } } })
      const d = evaluatePolicy(c, approveTo(ROUTER_BASE, '11'), ctx())
      expect(d).toMatchObject({ decision: 'require_approval', reasonCodes: ['token_amount_above_approval_threshold'] })
      expect(d.reasons[0]).toBe(`approval amount 11 of token ${USDC_BASE} is above the approval threshold of 10`)
      expect(evaluatePolicy(c, approveTo(ROUTER_BASE, '10'), ctx()).decision).toBe('allow')
    })

    it('unlimited approvals (uint96 max, 2^96 - 1, and up) need approval by default; "deny" and "allow" as configured', () => {
      const atBound = ((1n << 96n) - 1n).toString()
      const justBelow = ((1n << 96n) - 2n).toString()
      const d = evaluatePolicy(cfg(), approveTo(ROUTER_BASE, atBound), ctx())
      expect(d).toMatchObject({ decision: 'require_approval', reasonCodes: ['unlimited_approval'] })
      expect(d.reasons[0]).toBe(`an unlimited approval (2^96 - 1 or more) of token ${USDC_BASE} to ${ROUTER_BASE} needs an operator's approval`)
      // 2^255 - 1 went through without a human when the line was 2^255 (found by review).
      expect(evaluatePolicy(cfg(), approveTo(ROUTER_BASE, ((1n << 255n) - 1n).toString()), ctx()).decision).toBe('require_approval')
      expect(evaluatePolicy(cfg(), approveTo(ROUTER_BASE, justBelow), ctx()).decision).toBe('allow')
      const denied = evaluatePolicy(cfg({ unlimitedApprovals: 'deny' }), approveTo(ROUTER_BASE, UNLIMITED), ctx())
      expect(denied).toMatchObject({ decision: 'deny', reasonCodes: ['unlimited_approval_denied'] })
      expect(evaluatePolicy(cfg({ unlimitedApprovals: 'allow' }), approveTo(ROUTER_BASE, UNLIMITED), ctx()).decision).toBe('allow')
      // "allow" does not lift an explicit cap for the token.
      const capped = cfg({ unlimitedApprovals: 'allow', tokenLimits: { [USDC_BASE]: { maxAmount: '1' } } })
      expect(evaluatePolicy(capped, approveTo(ROUTER_BASE, UNLIMITED), ctx()).reasonCodes).toEqual(['approval_exceeds_max'])
    })
  })

  describe('swaps under a recipient allowlist pay whoever sells the token bought', () => {
    const FRIEND = '0x000000000000000000000000000000000000b0b0' as const
    const swapOf = (action: SwapExactInAction | SwapExactOutAction) => intent({ action })

    it('the review: recipientAllowlist [BOB], no token lists: a swap into any token needs an operator (it was allowed)', () => {
      for (const action of [actions.swapIn(), actions.swapOut()]) {
        const d = evaluatePolicy(cfg({ recipientAllowlist: [FRIEND] }), swapOf(action), ctx({ contract: ROUTER_BASE }))
        expect(d.decision).toBe('require_approval')
        expect(d.reasonCodes).toEqual(['acquired_token_not_in_allowlist'])
        expect(d.reasons[0]).toBe(`the swap buys token ${WETH_BASE}, which is not in the token allowlist; with a recipient allowlist, paying an unlisted token's sellers needs an operator's approval`)
      }
    })

    // Found by the second review: the attacker seeded the empty pool of two listed tokens at a hundredth of
    // their price; a swap whose minimum followed the simulation paid the pool 1,000 TUSD with no operator.
    it('a bought token in tokenAllowlist needs an operator too (nothing checks the pool’s price); without a recipient allowlist nothing changes', () => {
      const listed = cfg({ recipientAllowlist: [FRIEND], tokenAllowlist: [USDC_BASE, upper(WETH_BASE) as `0x${string}`] })
      for (const action of [actions.swapIn(), actions.swapOut()]) {
        const d = evaluatePolicy(listed, swapOf(action), ctx({ contract: ROUTER_BASE }))
        expect(d).toMatchObject({ decision: 'require_approval', reasonCodes: ['swap_price_unchecked'] })
        expect(d.reasons[0]).toBe(
          `the swap buys token ${WETH_BASE} at its pool's price, which anyone can set for a pool with little liquidity and nothing here checks; with a recipient allowlist, a swap needs an operator's approval`,
        )
      }
      expect(evaluatePolicy(cfg(), swapOf(actions.swapIn()), ctx({ contract: ROUTER_BASE })).decision).toBe('allow')
      expect(evaluatePolicy(cfg({ tokenAllowlist: [USDC_BASE, WETH_BASE] }), swapOf(actions.swapIn()), ctx({ contract: ROUTER_BASE })).decision).toBe('allow')
      // Selling into a listed token is fine; the token sold is not what the swap buys.
      const onlyOut = cfg({ recipientAllowlist: [FRIEND], tokenAllowlist: [WETH_BASE] })
      expect(evaluatePolicy(onlyOut, swapOf(actions.swapIn()), ctx()).reasonCodes).toEqual(['token_not_in_allowlist'])
    })

    it('transfers and approvals buy nothing: the recipient allowlist alone judges them', () => {
      const c = cfg({ recipientAllowlist: [RECIPIENT] })
      expect(evaluatePolicy(c, intent(), ctx({ contract: USDC_BASE })).decision).toBe('allow')
    })
  })
})
