import { randomUUID } from 'node:crypto'
import type { Clock, TxIntent } from '@countersign/shared'
import type { QuorumVotes } from '../quorum/quorumVotes.js'
import type { ApprovalSummary } from '../summary.js'

export interface PendingRequest {
  requestId: string
  intent: TxIntent
  /** keccak256(JCS(intent)): the same intent id with another body is another intent. */
  intentHash: string
  summary: ApprovalSummary
  createdAt: number
  expiresAt: number
  /** Above requireQuorumAbove: the named operators' approvals so far; null when one approval decides. */
  quorum: QuorumVotes | null
  /** The skill runner's call that created it (requestApproval `owner`): the only one that may withdraw it. Null for everyone else's. */
  owner: string | null
  /** requestApproval `replacing`: the lost transaction of this intent this request would sign again; null for a first signature. */
  replacing: string | null
}

export interface PendingLimits {
  /** How long a request waits for an operator (SPEC: 300 s). */
  ttlMs: number
  perWallet: number
  total: number
}

/** DESIGN §6: at most 5 pending per wallet, 500 in all. */
export const DEFAULT_PENDING_LIMITS: Omit<PendingLimits, 'ttlMs'> = { perWallet: 5, total: 500 }

/**
 * Requests waiting for an operator, one per intent id. An entry leaves by
 * exactly one way — taken for a decision, removed (withdrawn), or expired —
 * and an expired entry is never listed, found or decidable, even before the
 * sweep removes it.
 */
export class PendingRequests {
  private readonly entries = new Map<string, PendingRequest>()
  private readonly byIntentId = new Map<string, string>()

  constructor(
    private readonly clock: Clock,
    readonly limits: PendingLimits,
  ) {}

  /** Why a new request of this wallet cannot wait now, or null. */
  capacityProblem(wallet: string): string | null {
    const live = this.list()
    if (live.length >= this.limits.total) return `${live.length} approval requests are already waiting (at most ${this.limits.total}); decide or let some expire first`
    const w = wallet.toLowerCase()
    const mine = live.filter((e) => e.intent.wallet.address.toLowerCase() === w).length
    if (mine >= this.limits.perWallet) return `wallet ${wallet} already has ${mine} approval requests waiting (at most ${this.limits.perWallet})`
    return null
  }

  add(
    intent: TxIntent,
    intentHash: string,
    summary: ApprovalSummary,
    quorum: QuorumVotes | null = null,
    made: { owner?: string | null; replacing?: string | null } = {},
  ): PendingRequest {
    const now = this.clock()
    const entry: PendingRequest = {
      requestId: randomUUID(),
      intent,
      intentHash,
      summary,
      createdAt: now,
      expiresAt: now + this.limits.ttlMs,
      quorum,
      owner: made.owner ?? null,
      replacing: made.replacing ?? null,
    }
    this.entries.set(entry.requestId, entry)
    this.byIntentId.set(intent.id, entry.requestId)
    return entry
  }

  /** Live entries, oldest first. */
  list(): PendingRequest[] {
    const now = this.clock()
    return [...this.entries.values()].filter((e) => e.expiresAt > now)
  }

  get(requestId: string): PendingRequest | undefined {
    const e = this.entries.get(requestId)
    return e && e.expiresAt > this.clock() ? e : undefined
  }

  byIntent(intentId: string): PendingRequest | undefined {
    const id = this.byIntentId.get(intentId)
    return id === undefined ? undefined : this.get(id)
  }

  /** The live entry a skill run's call created (at most one: an owner id is fresh for each call). */
  byOwner(owner: string): PendingRequest | undefined {
    return this.list().find((e) => e.owner === owner)
  }

  /** Removes a live entry (for a decision, or a withdrawal); undefined when unknown, expired or already gone. */
  take(requestId: string): PendingRequest | undefined {
    const e = this.get(requestId)
    if (e) this.delete(e)
    return e
  }

  /** Puts back an entry whose decision could not be carried out (e.g. the signer was down). */
  restore(entry: PendingRequest): void {
    this.entries.set(entry.requestId, entry)
    this.byIntentId.set(entry.intent.id, entry.requestId)
  }

  /** Removes every expired entry; returns them. */
  sweep(): PendingRequest[] {
    const now = this.clock()
    const expired = [...this.entries.values()].filter((e) => e.expiresAt <= now)
    for (const e of expired) this.delete(e)
    return expired
  }

  private delete(e: PendingRequest): void {
    this.entries.delete(e.requestId)
    if (this.byIntentId.get(e.intent.id) === e.requestId) this.byIntentId.delete(e.intent.id)
  }
}
