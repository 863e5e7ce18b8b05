import { randomUUID } from 'node:crypto'
import { APPROVAL_REQUEST_TTL_MS, type Clock, type TxIntent } from '@countersign/shared'
import type { ApprovalSummary } from './summary.js'

export type Settlement =
  | { kind: 'approved'; approvalTokenId: string }
  | { kind: 'denied' }
  | { kind: 'expired' }
  | { kind: 'withdrawn' }

export interface PendingRequest {
  requestId: string
  intent: TxIntent
  summary: ApprovalSummary
  createdAt: number
  expiresAt: number
  settled: Promise<Settlement>
}

interface Entry extends PendingRequest {
  settle: (s: Settlement) => void
}

/**
 * Requests waiting for an operator. An entry leaves by exactly one way —
 * approved, denied, expired (300 s), or withdrawn (the client went away) —
 * and an expired entry is never listed or decidable, even before the sweep
 * removes it.
 */
export class PendingRequests {
  private readonly entries = new Map<string, Entry>()
  private readonly listeners = new Set<() => void>()

  constructor(private readonly clock: Clock) {}

  add(intent: TxIntent, summary: ApprovalSummary): PendingRequest {
    let settle!: (s: Settlement) => void
    const settled = new Promise<Settlement>((r) => (settle = r))
    const now = this.clock()
    const entry: Entry = { requestId: randomUUID(), intent, summary, createdAt: now, expiresAt: now + APPROVAL_REQUEST_TTL_MS, settled, settle }
    this.entries.set(entry.requestId, entry)
    this.changed()
    return entry
  }

  /** Live entries, oldest first. */
  list(): PendingRequest[] {
    const now = this.clock()
    return [...this.entries.values()].filter((e) => e.expiresAt > now)
  }

  /** Removes a live entry for a decision; undefined when unknown, expired or already decided. */
  take(requestId: string): (PendingRequest & { settle: (s: Settlement) => void }) | undefined {
    const e = this.entries.get(requestId)
    if (!e || e.expiresAt <= this.clock()) return undefined
    this.entries.delete(requestId)
    this.changed()
    return e
  }

  /** Puts back an entry whose decision could not be carried out (e.g. the signer was down). */
  restore(entry: PendingRequest & { settle: (s: Settlement) => void }): void {
    this.entries.set(entry.requestId, entry as Entry)
    this.changed()
  }

  withdraw(requestId: string): boolean {
    const e = this.entries.get(requestId)
    if (!e) return false
    this.entries.delete(requestId)
    e.settle({ kind: 'withdrawn' })
    this.changed()
    return true
  }

  findByIntent(intentId: string): PendingRequest | undefined {
    return [...this.entries.values()].find((e) => e.intent.id === intentId)
  }

  /** Settles and removes every expired entry; returns them. */
  sweep(): PendingRequest[] {
    const now = this.clock()
    const expired = [...this.entries.values()].filter((e) => e.expiresAt <= now)
    for (const e of expired) {
      this.entries.delete(e.requestId)
      e.settle({ kind: 'expired' })
    }
    if (expired.length) this.changed()
    return expired
  }

  onChange(fn: () => void): () => void {
    this.listeners.add(fn)
    return () => this.listeners.delete(fn)
  }

  private changed(): void {
    for (const fn of this.listeners) fn()
  }
}
