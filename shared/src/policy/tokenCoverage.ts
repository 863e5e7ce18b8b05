import type { PolicyConfig } from '../types.js'

/**
 * What an operator who keeps the defaults may not expect: requireApprovalAbove
 * and maxValueWei cover native value only, so with an empty tokenAllowlist a
 * token without an amount limit in tokenLimits (maxAmount or
 * requireApprovalAbove) is transferred and swapped in any amount with no
 * operator asked (approvals have their own caps: maxApprovalAmount,
 * unlimitedApprovals) (found by review: 1 wei of ETH needed an
 * approval, a billion USDC did not). Said at start, once; null when every
 * token the policy lets through has a limit.
 */
export function unlimitedTokensWarning(policy: PolicyConfig): string | null {
  // Only an amount limit limits a transfer: an entry with maxApprovalAmount alone, or none, leaves it open (found by review).
  const limited = new Set(
    Object.entries(policy.tokenLimits)
      .filter(([, limit]) => limit.maxAmount !== undefined || limit.requireApprovalAbove !== undefined)
      .map(([address]) => address.toLowerCase()),
  )
  if (policy.tokenAllowlist.length > 0) {
    const open = policy.tokenAllowlist.filter((a) => !limited.has(a.toLowerCase()))
    if (open.length === 0) return null
    return (
      `policy: ${open.length} token(s) of tokenAllowlist have no maxAmount or requireApprovalAbove in tokenLimits (${open.slice(0, 3).join(', ')}${open.length > 3 ? ', …' : ''}): ` +
      `any amount of them is transferred or swapped without an operator (requireApprovalAbove covers native value only)`
    )
  }
  const which = limited.size === 0 ? 'every ERC-20 token' : `every ERC-20 token but the ${limited.size} with an amount limit in tokenLimits`
  return (
    `policy: tokenAllowlist is empty, so ${which} is transferred or swapped in any amount without an operator ` +
    `(requireApprovalAbove covers native value only); set tokenLimits for the tokens the wallets hold, or a tokenAllowlist (docs/operations.md, "Policy")`
  )
}
