import { randomUUID } from 'node:crypto'
import type { ApprovalOutcome, ApprovalUpdates } from '@countersign/shared'

/**
 * The ends of requests (decided, expired, withdrawn) in order, for the
 * gateway's short poll (approvalUpdates). A cursor is "<epoch>.<seq>"; the
 * epoch changes when the approver restarts, and a cursor from another epoch
 * or older than what is retained answers `reset`, so the gateway asks again
 * for what it still waits for instead of missing a decision.
 */
export class DecisionFeed {
  private readonly epoch = randomUUID()
  private readonly entries: Array<{ seq: number; outcome: ApprovalOutcome }> = []
  private seq = 0

  constructor(
    /** At least this many of the latest ends are kept (up to a quarter more between trims). */
    private readonly retain = 20_000,
    /** At most this many per answer (a frame stays far below the socket's 1 MiB limit); the cursor then points at the last one. */
    private readonly perAnswer = 1_000,
  ) {}

  push(outcome: ApprovalOutcome): void {
    this.entries.push({ seq: ++this.seq, outcome })
    // Trimmed back to `retain` once a quarter over, not by one each time: taking one entry off the front of a
    // full array moved all the others (~120 µs a push at 20,000, on every decision of a busy approver).
    if (this.entries.length > this.retain + Math.max(1, this.retain >> 2)) this.entries.splice(0, this.entries.length - this.retain)
  }

  since(cursor: string | null): ApprovalUpdates {
    const current = `${this.epoch}.${this.seq}`
    // A first call only learns where the feed stands: it waits for nothing yet.
    if (cursor === null) return { cursor: current, reset: false, outcomes: [] }
    const dot = cursor.lastIndexOf('.')
    const epoch = cursor.slice(0, dot)
    const seq = Number(cursor.slice(dot + 1))
    const oldest = this.entries[0]?.seq ?? this.seq + 1
    if (dot === -1 || epoch !== this.epoch || !Number.isInteger(seq) || seq > this.seq || seq < oldest - 1) {
      return { cursor: current, reset: true, outcomes: [] }
    }
    // Entries are consecutive: the one after `seq` sits at index seq - oldest + 1.
    const newer = this.entries.slice(seq - oldest + 1, seq - oldest + 1 + this.perAnswer)
    const last = newer.at(-1)?.seq ?? seq
    return { cursor: `${this.epoch}.${last}`, reset: false, outcomes: newer.map((e) => e.outcome) }
  }
}
