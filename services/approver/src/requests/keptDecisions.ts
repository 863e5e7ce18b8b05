import type { ApprovalOutcome, Clock } from '@countersign/shared'

interface Kept {
  intentHash: string
  outcome: ApprovalOutcome
  /** The lost transaction the decided request was to replace (its `replacing`); null for a first signature. */
  replacing: string | null
  until: number
}

/**
 * Operator decisions kept by intent id (DESIGN §6 "pending requests"): a
 * client that gave up waiting and sends the same intent again gets the
 * decision at once, as long as the token could still be used (300 s). Only
 * the same intentHash gets it; the token is bound to that intent anyway.
 */
export class KeptDecisions {
  private readonly byIntent = new Map<string, Kept>()

  constructor(private readonly clock: Clock) {}

  keep(intentId: string, intentHash: string, outcome: ApprovalOutcome, until: number, replacing: string | null = null): void {
    this.byIntent.set(intentId, { intentHash, outcome, replacing, until })
  }

  get(intentId: string): { intentHash: string; outcome: ApprovalOutcome; replacing: string | null } | undefined {
    const k = this.byIntent.get(intentId)
    if (!k) return undefined
    if (k.until <= this.clock()) {
      this.byIntent.delete(intentId)
      return undefined
    }
    return k
  }

  sweep(): void {
    const now = this.clock()
    for (const [id, k] of this.byIntent) if (k.until <= now) this.byIntent.delete(id)
  }
}
