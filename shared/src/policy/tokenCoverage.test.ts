import { describe, expect, it } from 'vitest'
import type { PolicyConfig } from '../types.js'
import { defaultPolicyConfig } from './defaults.js'
import { unlimitedTokensWarning } from './tokenCoverage.js'

const USDC = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913'
const WETH = '0x4200000000000000000000000000000000000006'

describe('unlimitedTokensWarning: tokens the policy lets through in any amount, said at the gateway’s start', () => {
  it('the defaults: every token (requireApprovalAbove is native value only)', () => {
    expect(unlimitedTokensWarning(defaultPolicyConfig())).toMatch(/^policy: tokenAllowlist is empty, so every ERC-20 token is transferred or swapped in any amount without an operator/)
  })

  it('tokenLimits without an allowlist: every other token', () => {
    const policy = { ...defaultPolicyConfig(), tokenLimits: { [USDC]: { maxAmount: '1000000' } } } satisfies PolicyConfig
    expect(unlimitedTokensWarning(policy)).toMatch(/every ERC-20 token but the 1 with an amount limit in tokenLimits/)
  })

  it('an entry without an amount limit limits no transfer (review): {} and maxApprovalAmount alone count as open', () => {
    for (const limit of [{}, { maxApprovalAmount: '1' }]) {
      const policy = { ...defaultPolicyConfig(), tokenAllowlist: [USDC], tokenLimits: { [USDC]: limit } } satisfies PolicyConfig
      expect(unlimitedTokensWarning(policy)).toMatch(/^policy: 1 token\(s\) of tokenAllowlist have no maxAmount or requireApprovalAbove in tokenLimits/)
    }
  })

  it('an allowlist: the listed tokens without a limit (any case), or nothing', () => {
    const open = { ...defaultPolicyConfig(), tokenAllowlist: [USDC, WETH], tokenLimits: { [USDC.toLowerCase()]: { maxAmount: '1' } } } satisfies PolicyConfig
    expect(unlimitedTokensWarning(open)).toBe(
      `policy: 1 token(s) of tokenAllowlist have no maxAmount or requireApprovalAbove in tokenLimits (${WETH}): any amount of them is transferred or swapped without an operator (requireApprovalAbove covers native value only)`,
    )
    const closed = { ...defaultPolicyConfig(), tokenAllowlist: [USDC], tokenLimits: { [USDC]: { maxAmount: '1' } } } satisfies PolicyConfig
    expect(unlimitedTokensWarning(closed)).toBeNull()
  })
})
