/** Warnings with stable ids (DESIGN.md §3): not scored, shown to agents and operators. */
export interface Signal {
  id: 'lookalike_recipient' | 'first_time_recipient' | 'spender_not_contract' | 'declared_symbol_mismatch' | 'declared_decimals_mismatch' | 'token_not_contract' | 'simulation_unavailable' | 'gas_cost_exceeds_max' | 'l1_fee_unknown'
  message: string
}

/**
 * A recipient that shares the first and last four hex characters with an
 * address this wallet used before, but is not it: the shape of an
 * address-poisoning attack, which relies on people checking only the ends.
 */
export function findLookalike(recipient: string, known: string[]): string | null {
  const r = recipient.toLowerCase()
  const head = r.slice(2, 6)
  const tail = r.slice(-4)
  for (const k of known) {
    const kk = k.toLowerCase()
    if (kk !== r && kk.slice(2, 6) === head && kk.slice(-4) === tail) return k
  }
  return null
}
