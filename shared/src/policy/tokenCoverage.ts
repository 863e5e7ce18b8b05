import type { PolicyConfig } from '../types.js'

/**
 * What an operator who keeps the defaults may not expect: requireApprovalAbove
 * and maxValueWei cover native value only, so with an empty tokenAllowlist a
 * token without a tokenLimits entry is transferred, approved and swapped in
 * any amount with no operator asked (found by review: 1 wei of ETH needed an
 * approval, a billion USDC did not). Said at start, once; null when every
 * token the policy lets through has a limit.
 */
export function unlimitedTokensWarning(policy: PolicyConfig): string | null {
  if (policy.tokenAllowlist.length > 0) {
    const limited = new Set(Object.keys(policy.tokenLimits).map((a) => a.toLowerCase()))
    const open = policy.tokenAllowlist.filter((a) => !limited.has(a.toLowerCase()))
    if (open.length === 0) return null
    return (
      `policy: ${open.length} token(s) of tokenAllowlist have no tokenLimits entry (${open.slice(0, 3).join(', ')}${open.length > 3 ? ', …' : ''}): ` +
      `any amount of them is transferred, approved or swapped without an operator (requireApprovalAbove covers native value only)`
    )
  }
  const listed = Object.keys(policy.tokenLimits).length
  const which = listed === 0 ? 'every ERC-20 token' : `every ERC-20 token but the ${listed} in tokenLimits`
  return (
    `policy: tokenAllowlist is empty, so ${which} is transferred, approved or swapped in any amount without an operator ` +
    `(requireApprovalAbove covers native value only); set tokenLimits for the tokens the wallets hold, or a tokenAllowlist (docs/operations.md, "Policy")`
  )
}
