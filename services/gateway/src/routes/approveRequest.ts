import {
  APPROVAL_REFUSED,
  POLICY_VERSION,
  RpcError,
  RpcTimeoutError,
  RpcUnavailableError,
  approverMethods,
  fitApprovalParams,
  isAggregatorIntent,
  normalizeIntent,
  type ApprovalOutcome,
  type ApprovalRefusalData,
  type ApprovalTicket,
  type AuditLog,
  type BuiltTx,
  type PreflightFindings,
  type TxIntent,
  type WithdrawApprovalParams,
} from '@countersign/shared'
import { riskFactorSchema } from '@countersign/shared/http/approvalsContract'
import { policyDeniedBody, policyDeniedSchema, simpleErrorBody, simpleErrorSchema, validationErrorSchema } from '@countersign/shared/http/errorBodies'
import { bool, closed, described, nullableStr, num, str, strings } from '@countersign/shared/http/schemaParts'
import { HttpError } from '@countersign/shared/http/errors'
import type { TypedRoutes } from '@countersign/shared/http/typeProvider'
import { ApproverAnswerError } from '../approvals/checkedApprover.js'
import { settleAll } from '../pipeline/settleAll.js'
import type { IntentBuilder } from '../pipeline/intentBuilder.js'
import { applyPreflightRules, type PolicyGate } from '../pipeline/policyGate.js'
import type { ApprovalWaiters, ApproverCaller } from '../approvals/approvalWaiters.js'
import type { TokenFactsReader } from '../chain/tokenFacts.js'
import type { SkillCall, SkillCalls } from '../skills/skillCalls.js'
import { SignerWalletsUnknownError, type SignerWallets } from '../pipeline/signerWallets.js'
import type { ReservedIntents } from '../pipeline/reservedIntents.js'
import { denyAfterDeadline, replacementReason, requireApprovalToReplace, type SentTxFates, type SignedBefore } from '../chain/sentTxFates.js'

export type { ApproverCaller }
import { policyDecisionSchema, txHashSchema } from './contractParts.js'
import { txIntentInputSchema } from './intentInput.js'

/** SPEC "Approval result", and the decline body (403) of an operator's no, an expiry or a withdrawal. */
export const approveRequestRouteSchema = {
  operationId: 'approveRequest',
  description:
    'Blocks until an operator decides (web mode), up to 300 s. A client that disconnects does not withdraw the request: sending the same intent again attaches to it, or returns the decision made meanwhile (within the token lifetime). The token binds to txRequestHash and to keccak256(JCS(intent)). Before any operator is asked: 403 policy_denied "the signer holds no key for wallet 0x…" for a wallet the signer does not list in its accounts (checked first; its list is kept 30 s and asked again for a wallet it did not name), 502 no_rpc_client for a chain without RPC, 403 policy_denied when the estimated gas cost at the current max fee already exceeds constraints.maxGasWei (the reason names both numbers). An intent already signed whose transaction was mined or can still be is answered 200 without asking anyone, whatever approval policy requires now, and also when policy would now deny it once mined (approvalRequired false, no token, a warning naming the transaction, and one naming the reasons of a denial): sign-and-send returns that transaction; one not mined that policy\'s rules now deny (not its hourly limit or the risk score alone: the intent was counted when decided, and sign-and-send does not simulate it again) is 403 policy_denied, and sign-and-send does not send it again; one not mined whose deadline (the earliest of the bodies it was signed for) has passed is 403 policy_denied, as sign-and-send does not send it again.',
  body: txIntentInputSchema,
  response: {
    200: described(
      'Approved (or no approval needed: approvalRequired false and no token)',
      closed(
        {
          intentId: str,
          approved: { const: true },
          approvalRequired: bool,
          approvalTokenId: str,
          txRequestHash: txHashSchema,
          description: str,
          riskScore: num,
          warnings: strings,
          riskReasons: strings,
          riskFactors: { type: 'array', items: riskFactorSchema },
          gasEstimate: nullableStr,
          policyDecision: policyDecisionSchema,
        },
        ['intentId', 'approved', 'approvalRequired', 'txRequestHash', 'description', 'riskScore', 'warnings', 'riskReasons', 'riskFactors', 'gasEstimate', 'policyDecision'],
      ),
    ),
    400: validationErrorSchema,
    403: described('Policy denied (also: the signer holds no key for the wallet), or declined / expired / withdrawn', {
      anyOf: [
        policyDeniedSchema,
        closed({
          intentId: str,
          txRequestHash: txHashSchema,
          policyDecision: policyDecisionSchema,
          approvalRequired: { const: true },
          approved: { const: false },
          reason: { enum: ['user_declined', 'approval_expired', 'withdrawn'] },
        }),
      ],
    }),
    409: described('intent_conflict: this intent id already has an approval request (or decision) for a different body; the gateway holds the id for the request and the token it may grant (600 s from each time the approver is asked), across restarts', simpleErrorSchema),
    429: described('too_many_pending: the wallet has 5 requests waiting, or 500 wait in all', simpleErrorSchema),
    502: described('no_rpc_client: no RPC is configured for the chain (nothing is pending)', simpleErrorSchema),
    503: described(
      'approver_unavailable: the approver is not reachable, or it cannot gather the quorum of named operators the policy asks for (requireQuorumAbove; the message says how many it needs and has); signer_unavailable: the signer could not be asked whether it holds a key for the wallet (and never listed it before), or the approver approves by itself (SERVICE_APPROVAL_MODE=auto) and the signer could not issue the token. Nothing was approved either way; retry later',
      simpleErrorSchema,
    ),
  },
}

/**
 * Simulation and risk scoring of the intent (see app.ts). Findings with
 * simulationSuccess null mean no simulation ran. `recorded` settles when its
 * audit event (preflight_completed) is committed: the route lets that commit
 * share one transaction with its own events and awaits it before answering.
 */
export type RunPreflight = (intent: TxIntent, built: BuiltTx) => Promise<{ findings: PreflightFindings; recorded: Promise<unknown> }>

export interface ApproveRequestOptions {
  audit: AuditLog
  policyGate: PolicyGate
  buildIntent: IntentBuilder
  approver: ApproverCaller
  waiters: ApprovalWaiters
  preflight: RunPreflight
  tokenFacts: TokenFactsReader
  /** The skill sandbox runner's calls in progress (its approve-requests carry their headers, nobody else's do). */
  skillCalls: SkillCalls
  /** The wallets the signer holds keys for: no request is made for any other. */
  signerWallets: SignerWallets
  /** Intent ids held by approval requests: a request holds its id before the approver hears of it. */
  reserved: ReservedIntents
  /** Whether this intent was sent before, and whether that transaction can still be (or was) mined. */
  fates: Pick<SentTxFates, 'signedBefore'>
}

/** The skill that submitted the intent, when the request is a runner's call (the runner stamps metadata.source "skill:<name>"). */
function skillOf(call: SkillCall | null, intent: TxIntent): string | null {
  const source = intent.metadata?.source
  return call && source?.startsWith('skill:') ? source.slice('skill:'.length) : null
}

/** Runs `then` once the signal aborts, at once if it already has; returns what stops listening. */
function onceAborted(signal: AbortSignal, then: () => void): () => void {
  if (signal.aborted) {
    then()
    return () => undefined
  }
  signal.addEventListener('abort', then, { once: true })
  return () => signal.removeEventListener('abort', then)
}

/** What approve-request tells the client of an intent it answers without an operator: already signed. */
export const signedBeforeWarning = (before: SignedBefore): string =>
  `this intent was signed before (transaction ${before.txHash}, nonce ${before.nonce}), and that transaction was mined or can still be: sign-and-send answers with it (sending it again if the node does not have it) and signs nothing new, so no operator was asked and no approval token is needed`

/** approve-request's reason for a wallet the signer cannot sign for. */
const noSignerKeyReason = (wallet: string): string => `the signer holds no key for wallet ${wallet}`

/**
 * Refuses, before anything else runs, an intent whose wallet the signer holds
 * no key for: it could never be signed, and its request would take one of
 * the approver's pending places (5 per wallet, 500 in all) for 300 s, so
 * made-up wallets filled the queue and real requests got 429. 403
 * policy_denied naming the wallet, audited like the other early denials; 503
 * signer_unavailable when the signer cannot say (nothing is asked then
 * either: no token could be minted or used without it).
 */
async function requireSignerKey(wallets: SignerWallets, audit: AuditLog, intent: TxIntent): Promise<void> {
  const wallet = intent.wallet.address
  let held: boolean
  try {
    held = await wallets.holds(wallet)
  } catch (err) {
    if (!(err instanceof SignerWalletsUnknownError)) throw err
    throw new HttpError(503, simpleErrorBody('signer_unavailable', `the signer could not be asked whether it holds a key for wallet ${wallet} (${err.message}); nothing was asked, retry later`))
  }
  if (held) return
  const reason = noSignerKeyReason(wallet)
  // riskScore is one of this event's fields (SPEC Events) on every path: null here, where no preflight ran, not missing (found by review).
  await audit.append({ intentId: intent.id, event: 'approve_request_created', data: { decision: 'deny', riskScore: null, reasons: [reason], reasonCodes: ['no_signer_key'] } })
  throw new HttpError(403, policyDeniedBody([reason]))
}

const approverUnavailable = () => new HttpError(503, simpleErrorBody('approver_unavailable', 'the approver is not reachable; nothing was approved, retry later'))

/** What the approver answers when it refuses a request: 409 intent_conflict, 429 too_many_pending, 503 when it cannot gather a quorum or (auto mode) have a token minted. */
function refusal(err: unknown): HttpError | null {
  if (err instanceof RpcUnavailableError || err instanceof RpcTimeoutError) return approverUnavailable()
  if (err instanceof ApproverAnswerError) return new HttpError(503, simpleErrorBody('approver_unavailable', `${err.message}; nothing was approved, retry later`))
  if (!(err instanceof RpcError) || err.code !== APPROVAL_REFUSED) return null
  const { reason } = (err.data ?? {}) as Partial<ApprovalRefusalData>
  if (reason === 'intent_conflict') return new HttpError(409, simpleErrorBody('intent_conflict', err.message))
  if (reason === 'too_many_pending') return new HttpError(429, simpleErrorBody('too_many_pending', err.message))
  // The approver cannot gather the operators the gateway's policy asks for (its own configuration differs): nothing approved.
  if (reason === 'quorum_unavailable') return new HttpError(503, simpleErrorBody('approver_unavailable', err.message))
  // Auto mode with the signer down: no token could be minted, nothing approved.
  if (reason === 'signer_unavailable') return new HttpError(503, simpleErrorBody('signer_unavailable', err.message))
  return null
}

export const approveRequestRoutes: TypedRoutes<ApproveRequestOptions> = async (app, opts) => {
  const { audit, policyGate, approver } = opts
  // Best effort: a withdrawal that does not arrive leaves the request to expire like any unanswered one.
  const withdrawOwn = (owner: string) => approver.call(approverMethods.withdrawApproval, { owner } satisfies WithdrawApprovalParams).catch(() => undefined)

  app.post('/v1/tx/approve-request', { schema: approveRequestRouteSchema }, async (req, reply) => {
    const intent = normalizeIntent(req.body)
    opts.reserved.refuseAnotherBody(intent)
    await requireSignerKey(opts.signerWallets, audit, intent)
    req.phases?.mark('wallet-check')
    const built = await opts.buildIntent(intent)
    req.phases?.mark('build')
    const { findings: preflight, recorded } = await opts.preflight(intent, built)
    req.phases?.mark('preflight')
    const recordBuilt = () =>
      audit.append({ intentId: intent.id, event: 'tx_built', data: { txRequestHash: built.txRequestHash, description: built.description } })
    // preflight_completed, policy_evaluated and approve_request_created (and
    // tx_built when policy allows) go into one group commit, in that order
    // (appended in this turn: one batch, one transaction). All are durable
    // before the client is answered, whatever the answer. The approver may be
    // asked as soon as they are committed: its own rows then follow them in
    // audit.db, and its durable commit, later in the same -wal file, makes
    // them durable too (bench/RESULTS.md, 2026-11-24).
    // Sent before and lost for good (its nonce went to another of ours, in a safe block): signing it again needs an
    // operator whatever policy says (the signer requires it), and the token it used, if any, is consumed, so the
    // decision kept for it would hand back a token the signer refuses. The operator is asked again, and told why.
    // An intent never sent costs one gateway.db read here.
    const before = await opts.fates.signedBefore(intent, built.txRequestHash)
    const dead = before?.fate === 'dead' ? before : null
    const gate = policyGate.decide(intent, { riskScore: preflight.riskScore, contract: built.contract })
    const decision = denyAfterDeadline(requireApprovalToReplace(applyPreflightRules(gate.decision, preflight), dead), before)
    // Signed before, and that transaction was mined or still can be: sign-and-send answers with it and signs
    // nothing, token or not. An operator asked now would approve nothing, and a denial would tell the client
    // "declined" of a payment already made. Such a retry comes after the kept decision is gone (300 s, an
    // approver restart) or after policy changed. The same holds for a mined one that policy now denies (an
    // allowlist changed): a 403 told the client "denied" of a payment made, which sign-and-send then returned
    // (left open by the review of 2026-12-07). One not mined stays denied: found by review, a 200 here led
    // clients on to a sign-and-send that broadcast, for the first time, a transaction policy now denies.
    // A denial from the rate-limit window or the fresh risk score alone does not stop sign-and-send from sending
    // it again (PolicyGate.reconsider: the intent took its place in the window when it was decided, and nothing is
    // simulated again), so neither is answered 403 here.
    const sentAnyway = (b: SignedBefore) => b.mined || policyGate.reconsider(intent, { contract: built.contract }).decision !== 'deny'
    const answered = before?.fate === 'live' && (decision.decision === 'require_approval' || (decision.decision === 'deny' && sentAnyway(before))) ? before : null
    const created = audit.appendOrdered({
      intentId: intent.id,
      event: 'approve_request_created',
      data: {
        decision: decision.decision,
        riskScore: preflight.riskScore,
        txRequestHash: built.txRequestHash,
        ...(answered ? { signedBefore: answered.txHash } : {}),
        ...(intent.metadata?.source ? { source: intent.metadata.source } : {}),
      },
    })
    const builtRecorded = decision.decision === 'allow' || answered ? recordBuilt() : null
    const committed = settleAll([recorded, gate.audited, created.durable, builtRecorded])
    if (decision.decision === 'require_approval' && !answered) {
      committed.catch(() => undefined) // awaited before every answer below (the finally); this keeps an early failure observed
      await settleAll([created.ordered])
    } else await committed
    req.phases?.mark('audit')
    if (decision.decision === 'deny' && !answered) return reply.code(403).send(policyDeniedBody(decision.reasons))

    const policyDecision = { decision: decision.decision, reasons: decision.reasons, policyVersion: POLICY_VERSION }
    const result = {
      intentId: intent.id,
      txRequestHash: built.txRequestHash,
      description: built.description,
      riskScore: preflight.riskScore,
      warnings: preflight.warnings,
      riskReasons: preflight.riskFactors.map((f) => f.detail),
      riskFactors: preflight.riskFactors,
      gasEstimate: preflight.gasEstimate,
      policyDecision,
    }

    if (decision.decision === 'allow') {
      // tx_built was committed above, with approve_request_created. No token: sign-and-send needs none for this intent, and the signer checks that itself.
      return { ...result, approved: true, approvalRequired: false }
    }
    if (answered) {
      // No token: sign-and-send needs none for this intent now, as it signs nothing (the signer too answers a signed intent with its signature).
      const warnings = [...result.warnings, signedBeforeWarning(answered)]
      if (decision.decision === 'deny') warnings.push(`policy would deny this intent now (${decision.reasons.join('; ')}); that changes nothing for the transaction signed before it`)
      return { ...result, warnings, approved: true, approvalRequired: false }
    }

    // require_approval: the approver holds the request until an operator
    // decides or it expires (300 s). It answers at once with a ticket; this
    // call waits here, in the gateway, for the decision to come through the
    // waiters' poll. A client that goes away does not withdraw the request:
    // it stays on the dashboard, and a retry of the same intent attaches to
    // it or gets the decision that was made meanwhile.
    // No answer leaves before the first commit is durable (a failed commit
    // answers with its own error instead).
    try {
      // The approver has no RPC: the gateway hands on the tokens' own symbol and decimals, and who really submitted it.
      const facts = await opts.tokenFacts.read(intent)
      const call = opts.skillCalls.of(req.headers)
      const skill = skillOf(call, intent)
      // The approver reads the same policy; it also gets the quorum the gateway found, and requires the larger of the two.
      const quorum = policyGate.quorumFor(intent)
      // Within the bounds the approver's schema sets: much of this comes from contracts the client chose.
      const params = fitApprovalParams({
        intent,
        preflight,
        // The lost transaction first; requireApprovalToReplace already made it the only reason of an allowed intent.
        policyReasons: dead && !decision.reasons.includes(replacementReason(dead)) ? [replacementReason(dead), ...decision.reasons] : decision.reasons,
        ...(dead ? { replacing: dead.txHash } : {}),
        ...(quorum !== null ? { quorum } : {}),
        ...(isAggregatorIntent(intent) ? { txRequest: built.txRequest } : {}),
        ...(facts ? { tokenFacts: facts } : {}),
        ...(skill ? { skill } : {}),
        ...(call ? { owner: call.owner } : {}),
      })
      // Each ask (a retry after an approver restart too) holds the id first: once the request shows on the pending list, no other body can take it.
      const ask = () => {
        opts.reserved.holdForApproval(intent)
        return approver.call<ApprovalTicket>(approverMethods.requestApproval, params)
      }
      let outcome: ApprovalOutcome | null
      req.phases?.mark('token-facts')
      try {
        await opts.waiters.ready()
        const ticket = await ask()
        if (ticket.state === 'decided') outcome = ticket.outcome
        else {
          const gone = new AbortController()
          // The response's 'close' before we answered: the client gave up waiting.
          const onClose = () => {
            if (!reply.raw.writableEnded) gone.abort()
          }
          reply.raw.on('close', onClose)
          // A skill run that stopped (even before this ticket came) withdraws the request its call created; the approver
          // leaves any other alone, such as one this call only attached to. The withdrawn outcome then ends this wait.
          const forget = call ? onceAborted(call.stopped, () => void withdrawOwn(call.owner)) : () => undefined
          try {
            outcome = await opts.waiters.wait(ticket, ask, gone.signal)
          } finally {
            reply.raw.off('close', onClose)
            forget()
          }
          if (gone.signal.aborted) return reply
        }
      } catch (err) {
        throw refusal(err) ?? err
      }
      req.phases?.mark('approval')
      if (outcome === null) throw approverUnavailable()
      if (outcome.approved) {
        await recordBuilt()
        req.phases?.mark('audit-built')
        return { ...result, approved: true, approvalRequired: true, approvalTokenId: outcome.approvalTokenId }
      }
      // SPEC decline body; the same body with reason approval_expired after 300 s. send() answers at once: the commit first.
      await committed
      return reply.code(403).send({
        intentId: intent.id,
        txRequestHash: built.txRequestHash,
        policyDecision,
        approvalRequired: true,
        approved: false,
        reason: outcome.reason,
      })
    } finally {
      await committed
    }
  })
}
