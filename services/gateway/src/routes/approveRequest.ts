import type { FastifyPluginAsync } from 'fastify'
import {
  APPROVAL_REQUEST_TTL_MS,
  POLICY_VERSION,
  RpcTimeoutError,
  RpcUnavailableError,
  approverMethods,
  isAggregatorIntent,
  txIntentSchema,
  normalizeIntentAddresses,
  type ApprovalOutcome,
  type AuditLog,
  type BuiltTx,
  type PreflightFindings,
  type TxIntent,
} from '@countersign/shared'
import { HttpError } from '@countersign/shared/http/errors'
import type { IntentBuilder } from '../pipeline/intentBuilder.js'
import { policyDeniedBody, type PolicyGate } from '../pipeline/policyGate.js'

export interface ApproverCaller {
  call<T>(method: string, params: unknown, opts?: { timeoutMs?: number }): Promise<T>
}

/**
 * Simulation and risk scoring of the intent (see app.ts). Findings with
 * simulationSuccess null mean no simulation ran.
 */
export type RunPreflight = (intent: TxIntent, built: BuiltTx) => Promise<PreflightFindings>

export interface ApproveRequestOptions {
  audit: AuditLog
  policyGate: PolicyGate
  buildIntent: IntentBuilder
  approver: ApproverCaller
  preflight: RunPreflight
}

export const approveRequestRoutes: FastifyPluginAsync<ApproveRequestOptions> = async (app, opts) => {
  const { audit, policyGate, approver } = opts

  app.post('/v1/tx/approve-request', { schema: { body: txIntentSchema } }, async (req, reply) => {
    const intent = normalizeIntentAddresses(req.body as TxIntent)
    const built = await opts.buildIntent(intent)
    const preflight = await opts.preflight(intent, built)
    let decision = await policyGate.check(intent, { riskScore: preflight.riskScore, contract: built.contract })
    if (decision.decision === 'allow' && preflight.simulationSuccess === null) {
      // Nothing was simulated (no RPC for the chain, or the node failed): a human looks instead.
      decision = { ...decision, decision: 'require_approval', reasons: ['no simulation could run for this intent; approval required'], reasonCodes: ['simulation_unavailable'] }
    }
    await audit.append({
      intentId: intent.id,
      event: 'approve_request_created',
      data: { decision: decision.decision, riskScore: preflight.riskScore, txRequestHash: built.txRequestHash, ...(intent.metadata?.source ? { source: intent.metadata.source } : {}) },
    })
    if (decision.decision === 'deny') return reply.code(403).send(policyDeniedBody(decision))

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
    const recordBuilt = () =>
      audit.append({ intentId: intent.id, event: 'tx_built', data: { txRequestHash: built.txRequestHash, description: built.description } })

    if (decision.decision === 'allow') {
      await recordBuilt()
      // No token: sign-and-send needs none for this intent, and the signer checks that itself.
      return { ...result, approved: true, approvalRequired: false }
    }

    // require_approval: the approver holds the request until an operator decides or 300 s pass.
    const gone = new AbortController()
    // The response's 'close' fires when the connection goes away; before we
    // answered, that means the client gave up waiting.
    const onClose = () => {
      if (!reply.raw.writableEnded) gone.abort()
    }
    reply.raw.on('close', onClose)
    const withdraw = () => {
      void approver.call(approverMethods.withdrawApproval, { intentId: intent.id }).catch((err: unknown) => {
        req.log.warn({ err }, 'could not withdraw the approval request of a client that went away')
      })
    }
    gone.signal.addEventListener('abort', withdraw, { once: true })
    let outcome: ApprovalOutcome
    try {
      outcome = await approver.call<ApprovalOutcome>(
        approverMethods.requestApproval,
        // The approver derives the hash itself; an aggregator swap's calldata comes along to be checked there.
        { intent, preflight, policyReasons: decision.reasons, ...(isAggregatorIntent(intent) ? { txRequest: built.txRequest } : {}) },
        { timeoutMs: APPROVAL_REQUEST_TTL_MS + 15_000 },
      )
    } catch (err) {
      if (err instanceof RpcUnavailableError || err instanceof RpcTimeoutError) {
        throw new HttpError(503, { error: 'approver_unavailable', message: 'the approver is not reachable; nothing was approved, retry later' })
      }
      throw err
    } finally {
      reply.raw.off('close', onClose)
      gone.signal.removeEventListener('abort', withdraw)
    }
    if (outcome.approved) {
      await recordBuilt()
      return { ...result, approved: true, approvalRequired: true, approvalTokenId: outcome.approvalTokenId }
    }
    // SPEC decline body; the same body with reason approval_expired after 300 s.
    return reply.code(403).send({
      intentId: intent.id,
      txRequestHash: built.txRequestHash,
      policyDecision,
      approvalRequired: true,
      approved: false,
      reason: outcome.reason,
    })
  })
}
