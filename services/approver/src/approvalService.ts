import {
  type ApprovalOutcome,
  type AuditLog,
  type Clock,
  type Hex,
  type GrantParams,
  type GrantResult,
  intentHash,
  type RequestApprovalParams,
  type RouterTable,
} from '@countersign/shared'
import type { ApprovalMode } from './config.js'
import type { PendingRequest, PendingRequests, Settlement } from './pendingRequests.js'
import { summarise, type ApprovalSummary } from './summary.js'

export interface Granter {
  grant(binding: GrantParams): Promise<GrantResult>
}

/** Asks on the approver's terminal (cli mode); resolves true for yes. */
export type TerminalPrompt = (summary: ApprovalSummary, requestId: string, signal: AbortSignal) => Promise<boolean>

export class DecisionError extends Error {
  constructor(
    readonly code: 'not_found' | 'signer_unavailable',
    message: string,
  ) {
    super(message)
  }
}

export interface ApprovalService {
  /** Blocks until the request is approved, denied, expired or withdrawn (the caller's signal aborts). */
  requestApproval(params: RequestApprovalParams, signal: AbortSignal): Promise<ApprovalOutcome>
  decide(requestId: string, approved: boolean, via: 'web' | 'terminal'): Promise<{ decided: true; requestId: string; approved: boolean }>
  withdrawByIntent(intentId: string): boolean
  sweep(): void
  pending: PendingRequests
}

export function createApprovalService(deps: {
  mode: ApprovalMode
  pending: PendingRequests
  granter: Granter
  audit: AuditLog
  routers: RouterTable
  clock: Clock
  prompt?: TerminalPrompt
}): ApprovalService {
  const { pending, granter, audit } = deps

  async function grant(entry: { intent: RequestApprovalParams['intent']; summary: ApprovalSummary }, how: string): Promise<string> {
    // Bound to the transaction and to the exact intent shown to the operator.
    const { approvalTokenId } = await granter.grant({ txRequestHash: entry.summary.txRequestHash as Hex, intentHash: intentHash(entry.intent), intentId: entry.intent.id })
    await audit.append({
      intentId: entry.intent.id,
      event: 'approval_granted',
      data: { action: entry.summary.action, tokenId: approvalTokenId, riskScore: entry.summary.riskScore, via: how },
    })
    return approvalTokenId
  }

  async function reject(entry: { intent: RequestApprovalParams['intent']; summary: ApprovalSummary }, how: string) {
    await audit.append({ intentId: entry.intent.id, event: 'approval_rejected', data: { action: entry.summary.action, reason: 'user_declined', via: how } })
  }

  const outcome = (p: PendingRequest, s: Settlement): ApprovalOutcome => {
    const base = { requestId: p.requestId, txRequestHash: p.summary.txRequestHash }
    switch (s.kind) {
      case 'approved':
        return { approved: true, ...base, approvalTokenId: s.approvalTokenId }
      case 'denied':
        return { approved: false, ...base, reason: 'user_declined' }
      case 'expired':
        return { approved: false, ...base, reason: 'approval_expired' }
      case 'withdrawn':
        return { approved: false, ...base, reason: 'withdrawn' }
    }
  }

  const service: ApprovalService = {
    pending,

    async requestApproval(params, signal) {
      const summary = summarise(params.intent, params.preflight, params.policyReasons, deps.routers, params.txRequest)
      if (deps.mode === 'auto') {
        const requestId = 'auto'
        const approvalTokenId = await grant({ intent: params.intent, summary }, 'auto')
        return { approved: true, requestId, txRequestHash: summary.txRequestHash, approvalTokenId }
      }
      const entry = pending.add(params.intent, summary)
      const onAbort = () => {
        if (pending.withdraw(entry.requestId)) {
          void audit.append({ intentId: params.intent.id, event: 'approval_withdrawn', data: { requestId: entry.requestId, reason: 'client_disconnected' } })
        }
      }
      signal.addEventListener('abort', onAbort, { once: true })
      if (signal.aborted) onAbort()
      await audit.append({
        intentId: params.intent.id,
        event: 'approval_requested',
        data: { requestId: entry.requestId, action: summary.action, riskScore: summary.riskScore, mode: deps.mode },
      })
      if (deps.mode === 'cli' && deps.prompt) {
        const asked = new AbortController()
        void entry.settled.then(() => asked.abort())
        deps
          .prompt(summary, entry.requestId, asked.signal)
          .then((yes) => service.decide(entry.requestId, yes, 'terminal'))
          .catch(() => {
            /* no answer in time or the request ended elsewhere: it stays pending until it expires */
          })
      }
      try {
        const settlement = await entry.settled
        if (settlement.kind === 'expired') {
          await audit.append({ intentId: params.intent.id, event: 'approval_expired', data: { requestId: entry.requestId, action: summary.action } })
        }
        return outcome(entry, settlement)
      } finally {
        signal.removeEventListener('abort', onAbort)
      }
    },

    async decide(requestId, approved, via) {
      const entry = pending.take(requestId)
      if (!entry) throw new DecisionError('not_found', `approval request ${requestId} does not exist, has expired or was already decided`)
      const action = entry.summary.action
      if (approved) {
        let approvalTokenId: string
        try {
          approvalTokenId = await grant(entry, via)
        } catch (err) {
          pending.restore(entry)
          throw new DecisionError('signer_unavailable', `the signer could not issue a token (${(err as Error).message}); the request is still pending`)
        }
        await audit.append({ intentId: entry.intent.id, event: 'web_approval_decided', data: { requestId, approved: true, action, via } })
        entry.settle({ kind: 'approved', approvalTokenId })
      } else {
        await reject(entry, via)
        await audit.append({ intentId: entry.intent.id, event: 'web_approval_decided', data: { requestId, approved: false, action, via } })
        entry.settle({ kind: 'denied' })
      }
      return { decided: true, requestId, approved }
    },

    withdrawByIntent(intentId) {
      const e = pending.findByIntent(intentId)
      if (!e || !pending.withdraw(e.requestId)) return false
      void audit.append({ intentId, event: 'approval_withdrawn', data: { requestId: e.requestId, reason: 'client_disconnected' } })
      return true
    },

    sweep() {
      pending.sweep()
    },
  }
  return service
}
