import type { BalanceDiff, Clock, TokenFact } from '@countersign/shared'

/** What a simulation found about one transaction, enough to score its risk again. */
export interface SimulationFacts {
  simulationSuccess: boolean
  gasEstimate: bigint
  /** The chain's symbol() and decimals() of the tokens involved, to check another intent's declared ones against. */
  tokens: TokenFact[]
  /** Tokens that claim a well-known symbol of the chain at another address, one sentence each (lookalike_token_symbol). */
  lookalikes: string[]
  /** The wallet's simulated balance changes (a swap's bound is held to them at sign time); null unless the simulation succeeded. */
  balanceDiffs: BalanceDiff[] | null
  /** totalSupply() of the tokens approved, by lower-case address (approval_covers_supply); absent when none was read. */
  tokenSupplies?: Readonly<Record<string, bigint>>
}

export interface RecentPreflights {
  remember(txRequestHash: string, facts: SimulationFacts): void
  /** The facts of a simulation of this exact transaction (same txRequestHash: same call, wallet and chain) within the window, if any. */
  get(txRequestHash: string): SimulationFacts | undefined
}

/** DESIGN.md §6 "risk at sign time": a preflight is reused for 120 s. */
export const PREFLIGHT_REUSE_MS = 120_000
const KEPT = 10_000

/**
 * Simulations of the last two minutes, in memory. sign-and-send reuses one
 * instead of simulating again: the chain state it saw is at most that old,
 * as it would be for a client that preflighted and then sent. Only
 * simulations that ran are kept (a node failure is tried again). Bounded: a
 * client cannot grow it beyond KEPT entries; the oldest go first.
 */
export function createRecentPreflights(clock: Clock, reuseMs = PREFLIGHT_REUSE_MS): RecentPreflights {
  const byHash = new Map<string, SimulationFacts & { atMs: number }>()
  return {
    remember(txRequestHash, facts) {
      byHash.delete(txRequestHash)
      if (byHash.size >= KEPT) byHash.delete(byHash.keys().next().value!)
      byHash.set(txRequestHash, { ...facts, atMs: clock() })
    },
    get(txRequestHash) {
      const hit = byHash.get(txRequestHash)
      if (!hit) return undefined
      if (clock() - hit.atMs > reuseMs) {
        byHash.delete(txRequestHash)
        return undefined
      }
      return { simulationSuccess: hit.simulationSuccess, gasEstimate: hit.gasEstimate, tokens: hit.tokens, lookalikes: hit.lookalikes, balanceDiffs: hit.balanceDiffs, ...(hit.tokenSupplies ? { tokenSupplies: hit.tokenSupplies } : {}) }
    },
  }
}
