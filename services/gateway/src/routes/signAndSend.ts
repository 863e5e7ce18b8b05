import {
  canonicalUuid,
  signerMethods,
  normalizeIntent,
  specOf,
  txFiguresProblem,
  gasCostPolicyProblem,
  isWithinDeadline,
  VALUE_RECEIVING_ROLES,
  type Address,
  type AuditLog,
  type Clock,
  type Hex,
  type PolicyConfig,
  type SignParams,
  type SignResult,
  type TxIntent,
} from '@countersign/shared'
import type { ChainClients } from '../chain/chainClients.js'
import { rpcFailure, rpcMessage } from '../chain/chainClients.js'
import { isNodeRefusal } from '../chain/nodeRefusal.js'
import type { L1FeeReader } from '../chain/l1Fee.js'
import { costParts } from '../preflight/runPreflight.js'
import { broadcastSignedTx } from '../chain/broadcast.js'
import { notSentAfterDeadline, notSentWhileDenied, replacementReason, sentDeadline, type SentTxFates } from '../chain/sentTxFates.js'
import { estimateFees, gasLimitFor } from '../chain/fees.js'
import type { WalletQueue } from '../chain/walletQueue.js'
import { approvalRequiredBody, policyDeniedBody, signingRefusedSchema, simpleErrorBody, simpleErrorSchema, validationErrorSchema } from '@countersign/shared/http/errorBodies'
import { bool, closed, described, nullableStr, str } from '@countersign/shared/http/schemaParts'
import { HttpError } from '@countersign/shared/http/errors'
import type { TypedRoutes } from '@countersign/shared/http/typeProvider'
import { settleAll } from '../pipeline/settleAll.js'
import type { PhaseTimer } from '../serverTiming.js'
import type { IntentBuilder } from '../pipeline/intentBuilder.js'
import { applyPreflightRules, type PolicyGate } from '../pipeline/policyGate.js'
import type { AssessAtSignTime } from '../preflight/signTimeRisk.js'
import type { ReservedIntents } from '../pipeline/reservedIntents.js'
import { signerFailure } from '../pipeline/signerErrors.js'
import type { KnownRecipients } from '../store/knownRecipients.js'
import type { SentTxs } from '../store/sentTxs.js'
import { noRpcOrRpcError, txHashSchema } from './contractParts.js'
import { signAndSendInputSchema } from './intentInput.js'

export const signAndSendRouteSchema = {
  operationId: 'signAndSend',
  description:
    'Enforces what approve-request enforces: the risk ceiling (maxRiskScore, 403 policy_denied with the risk reason) and approval when nothing could be simulated, using the preflight of the same transaction from the last 120 s or running one. An intent signed before is answered with that transaction (sent again when not mined), signing nothing new, unless it was not mined and its deadline has passed or policy\'s rules now deny it (403 policy_denied, the last reason saying it is not sent again; the hourly limit counted the intent when it was decided and counts it no more, except a maxTxPerHour of 0, which stops every transaction; the risk score is not judged again), or it can never be mined (another transaction took its nonce): then it is signed again as a replacement, which needs an approval token.',
  body: signAndSendInputSchema,
  response: {
    200: described('Signed (and broadcast unless broadcast is false)', closed({ intentId: str, signedTx: str, txHash: txHashSchema, broadcast: bool, broadcastError: nullableStr })),
    400: validationErrorSchema,
    403: described('policy_denied (the policy error body), approval_required (with txRequestHash), invalid_approval_token or signing_failed', signingRefusedSchema),
    409: described('intent_conflict: the intent id was signed for another transaction, or an approval request holds it for a different body (until that request and its token expire; nothing is signed)', simpleErrorSchema),
    502: noRpcOrRpcError,
    503: described(
      "signer_unavailable: the signer is not reachable, or (message starting key_unavailable:) the wallet's key is on a PKCS#11 token the signer cannot reach now; or the signer did not answer in time (the signature may or may not exist). Retrying the same intent is always safe: signing is idempotent",
      simpleErrorSchema,
    ),
  },
}

/** The part of the signer client this route needs. */
export interface SignerCaller {
  call<T>(method: string, params: unknown, opts?: { timeoutMs?: number }): Promise<T>
}

export interface SignAndSendOptions {
  audit: AuditLog
  policyGate: PolicyGate
  buildIntent: IntentBuilder
  chains: ChainClients
  queue: WalletQueue
  sentTxs: SentTxs
  knownRecipients: KnownRecipients
  signer: SignerCaller
  clock: Clock
  /** Risk score and simulation outcome for this transaction: a recent preflight, or one run now. */
  assessRisk: AssessAtSignTime
  /** For its maxGasCostWei, checked against the fees the node quotes. */
  policy: Pick<PolicyConfig, 'maxGasCostWei'>
  reserved: ReservedIntents
  /** What became of the transactions sent before (sent_txs against the chain). */
  fates: SentTxFates
  /** An OP-stack chain's L1 data fee for the transaction, counted in its gas cost. */
  l1Fee: L1FeeReader
}

export const signAndSendRoutes: TypedRoutes<SignAndSendOptions> = async (app, opts) => {
  const { audit, policyGate, chains, queue, sentTxs, knownRecipients, signer, clock } = opts

  const denied = async (intent: TxIntent, reason: string, context: Record<string, unknown>) =>
    audit.append({ intentId: intent.id, event: 'signing_denied', data: { reason, ...context } })

  const { fateOf } = opts.fates

  /**
   * A transaction signed before the deadline and never mined is not sent again after it: sending it now would
   * act after the deadline. The deadline is the earliest one it was signed or sent under (gateway.db keeps it),
   * or the retry's if earlier: found by review, a retry naming a later deadline re-broadcast it, and for a
   * transfer or approve the deadline is not in the transaction, so the body still matched it.
   */
  async function refuseAfterDeadline(intent: TxIntent, sent: { txHash: string; nonce: number; deadline: number | null }, fate: string): Promise<void> {
    const deadline = sentDeadline(sent, intent)
    if (fate !== 'open' || isWithinDeadline(deadline, clock())) return
    await denied(intent, 'deadline_passed', { txHash: sent.txHash, nonce: sent.nonce, deadline })
    throw new HttpError(403, policyDeniedBody([notSentAfterDeadline(deadline, sent)]))
  }

  /**
   * A transaction signed before and never mined is not sent again once policy denies its intent (a recipient
   * taken off the allowlist, a lower value limit): sending it would make, now, a payment policy refuses. Before,
   * a retry of an intent whose broadcast had failed re-broadcast it whatever policy had become (the `prior`
   * branch ran before policy). Mined ones are answered as they are: nothing is sent. Policy is asked without
   * side effects (PolicyGate.reconsider): the rate-limit window counted the intent when it was decided.
   */
  async function refuseDeniedNow(intent: TxIntent, contract: Address | null, sent: { txHash: string; nonce: number }, fate: string): Promise<void> {
    if (fate !== 'open') return
    const now = policyGate.reconsider(intent, { contract })
    if (now.decision !== 'deny') return
    await denied(intent, 'policy_deny', { txHash: sent.txHash, nonce: sent.nonce, reasons: now.reasons, reasonCodes: now.reasonCodes })
    throw new HttpError(403, policyDeniedBody([...now.reasons, notSentWhileDenied(sent)]))
  }

  /**
   * The nonce for a new transaction: the planned one (NonceBook), unless the
   * node's pending count is below it and our transaction at that count is
   * gone from the node (evicted from its pool, a node restart): then that
   * nonce is free again and is taken, so the wallet does not stall behind a
   * gap no later transaction can cross. The intent whose transaction was
   * dropped is signed anew on its retry (that transaction is then dead).
   */
  async function nonceFor(intent: TxIntent, pending: number, planned: number): Promise<number> {
    if (pending >= planned) return planned
    const chain = chains.get(intent.chain.chainId)
    for (const ours of sentTxs.atNonce(intent.chain.chainId, intent.wallet.address, pending)) {
      const known = await chain.client.getTransaction({ hash: ours.txHash as Hex }).then(
        () => true,
        () => false,
      )
      if (known) return planned
    }
    return pending
  }

  async function broadcastAndRecord(intent: TxIntent, txRequestHash: string, signed: { signedTx: Hex; txHash: Hex; nonce: number }, phases: PhaseTimer | null) {
    const chain = chains.get(intent.chain.chainId)
    const outcome = await broadcastSignedTx(chain, signed.signedTx, signed.txHash)
    phases?.mark('broadcast')
    sentTxs.save(sentRecord(intent, txRequestHash, signed, outcome.ok), clock())
    if (outcome.ok) {
      for (const c of specOf(intent.action).counterparties(intent)) {
        if (VALUE_RECEIVING_ROLES.includes(c.role)) knownRecipients.add(intent.chain.chainId, intent.wallet.address, c.address, clock())
      }
      await audit.append({ intentId: intent.id, event: 'tx_broadcast', data: { txHash: signed.txHash, chainId: intent.chain.chainId } })
    } else {
      await audit.append({ intentId: intent.id, event: 'broadcast_failed', data: { txHash: signed.txHash, error: outcome.error } })
    }
    phases?.mark('audit-broadcast')
    return {
      intentId: intent.id,
      signedTx: signed.signedTx,
      txHash: signed.txHash,
      broadcast: outcome.ok,
      broadcastError: outcome.ok ? null : outcome.error,
    }
  }

  app.post('/v1/tx/sign-and-send', { schema: signAndSendRouteSchema }, async (req, reply) => {
    const intent = normalizeIntent(req.body.intent)
    // Another body under the id of an intent an operator is deciding (or decided) is never signed: first come would own the id.
    opts.reserved.refuseAnotherBody(intent)
    // The token as the signer knows it (it mints lower case, and takes nothing else): a client may have written it in upper case.
    const approvalTokenId = req.body.approvalTokenId === undefined ? undefined : canonicalUuid(req.body.approvalTokenId)
    const chain = chains.get(intent.chain.chainId)
    const built = await opts.buildIntent(intent)
    req.phases?.mark('build')

    // A retry of an intent that was already signed re-broadcasts that same
    // transaction: no second signature, no new token. Unless it can never be
    // mined (its nonce went to another transaction, e.g. while its broadcast
    // failed): then it is signed again below, replacing it.
    const prior = sentTxs.byIntent(intent.id)
    if (prior) {
      if (prior.txRequestHash !== built.txRequestHash) {
        throw new HttpError(409, simpleErrorBody('intent_conflict', `intent ${intent.id} was already signed for a different transaction`))
      }
      const fate = await fateOf(intent, prior.nonce, prior.txHash as Hex)
      await refuseAfterDeadline(intent, prior, fate)
      await refuseDeniedNow(intent, built.contract, prior, fate)
      // Mined: nothing to send or record again, and nothing to wait behind the wallet's queue for. Before, each
      // retry re-sent it through the queue and audited tx_broadcast again: a flood of retries of one mined intent
      // held the wallet's next real transaction for 20 s (found by review).
      if (fate === 'mined') {
        return { intentId: intent.id, signedTx: prior.signedTx as Hex, txHash: prior.txHash as Hex, broadcast: true, broadcastError: null }
      }
      if (fate !== 'dead') {
        return queue.run(intent.chain.chainId, intent.wallet.address, () =>
          broadcastAndRecord(intent, prior.txRequestHash, { signedTx: prior.signedTx as Hex, txHash: prior.txHash as Hex, nonce: prior.nonce }, req.phases),
        )
      }
    }

    // Risk at sign time (DESIGN.md §6): the same ceiling and the same
    // "nothing simulated, a human decides" rule as approve-request.
    const risk = await opts.assessRisk(intent, built)
    req.phases?.mark('risk')
    // policy_evaluated (the durable rate-limit record) commits while the chain
    // is read below; it is awaited before the signer is asked and before any answer.
    const gate = policyGate.decide(intent, { contract: built.contract, riskScore: risk.riskScore })
    const policyAudited = gate.audited
    policyAudited.catch(() => undefined) // awaited below on every path; this only keeps an early failure from being "unhandled"
    const decision = applyPreflightRules(gate.decision, risk)
    if (decision.decision === 'deny') {
      await settleAll([policyAudited, denied(intent, 'policy_deny', { reasons: decision.reasons, reasonCodes: decision.reasonCodes, riskScore: risk.riskScore })])
      return reply.code(403).send(policyDeniedBody(decision.reasons))
    }
    if (decision.decision === 'require_approval' && !approvalTokenId) {
      await settleAll([policyAudited, denied(intent, 'missing_approval_token', { txRequestHash: built.txRequestHash })])
      return reply
        .code(403)
        .send(approvalRequiredBody(`policy requires approval (${decision.reasons.join('; ')}); call POST /v1/tx/approve-request and pass its approvalTokenId`, built.txRequestHash))
    }

    const sent = queue.run(intent.chain.chainId, intent.wallet.address, async (nonces) => {
      req.phases?.mark('wallet-queue')
      // A call for the same intent ahead of this one in the queue (a client's retry that overlapped
      // its first call) may have signed it meanwhile: that transaction is the answer, not a new one.
      const meanwhile = sentTxs.byIntent(intent.id)
      if (meanwhile && meanwhile.txHash !== prior?.txHash) {
        if (meanwhile.txRequestHash !== built.txRequestHash) {
          throw new HttpError(409, simpleErrorBody('intent_conflict', `intent ${intent.id} was already signed for a different transaction`))
        }
        const fate = await fateOf(intent, meanwhile.nonce, meanwhile.txHash as Hex)
        await refuseAfterDeadline(intent, meanwhile, fate)
        await refuseDeniedNow(intent, built.contract, meanwhile, fate)
        if (fate !== 'dead') {
          return broadcastAndRecord(intent, meanwhile.txRequestHash, { signedTx: meanwhile.signedTx as Hex, txHash: meanwhile.txHash as Hex, nonce: meanwhile.nonce }, req.phases)
        }
      }
      const tx = built.txRequest
      // Nonce, fees and the gas estimate are independent reads: one round trip to the node, not two.
      const [reads, estimated] = await Promise.allSettled([
        Promise.all([chain.client.getTransactionCount({ address: intent.wallet.address, blockTag: 'pending' }), estimateFees(chain.client, intent.preferences?.speed), opts.l1Fee(chain, tx)]),
        chain.client.estimateGas({ account: intent.wallet.address, to: tx.to, data: tx.data, value: BigInt(tx.value) }),
      ])
      req.phases?.mark('chain')
      await policyAudited
      req.phases?.mark('audit')
      if (reads.status === 'rejected') throw rpcFailure(reads.reason, intent.chain.chainId)
      const [pending, fees, l1Fee] = reads.value
      if (estimated.status === 'rejected') {
        // A node that did not answer says nothing about the transaction: 502, which the client may retry.
        if (!isNodeRefusal(estimated.reason)) throw rpcFailure(estimated.reason, intent.chain.chainId)
        const message = `the transaction would fail on chain ${intent.chain.chainId}: ${rpcMessage(estimated.reason)}`
        await denied(intent, 'simulation_failed', { error: message })
        throw new HttpError(403, simpleErrorBody('signing_failed', message))
      }
      const estimate = estimated.value
      const gas = gasLimitFor(estimate, tx.data !== '0x')
      // A node that answers figures no transaction can carry is a node failure, not something to sign.
      const unsignable = txFiguresProblem({ gas, maxFeePerGas: fees.maxFeePerGas, maxPriorityFeePerGas: fees.maxPriorityFeePerGas })
      if (unsignable) throw new HttpError(502, simpleErrorBody('rpc_error', `chain ${intent.chain.chainId}: the node's figures cannot be signed: ${unsignable}`))
      // On an OP-stack chain the L1 data fee comes out of the wallet too (chain/l1Fee.ts). The signer, without a
      // network, checks gas × max fee against the same ceiling; the L1 part is checked here only.
      const cost = gas * fees.maxFeePerGas + l1Fee
      const l1 = l1Fee > 0n ? { l1FeeWei: l1Fee.toString() } : {}
      if (cost > BigInt(intent.constraints.maxGasWei)) {
        const reason = `gas cost ${cost} wei (${costParts(gas, fees.maxFeePerGas, l1Fee)}) exceeds constraints.maxGasWei ${intent.constraints.maxGasWei}`
        await denied(intent, 'gas_cost_exceeds_max', { gasCostWei: cost.toString(), ...l1, maxGasWei: intent.constraints.maxGasWei })
        return reply.code(403).send(policyDeniedBody([reason]))
      }
      const overPolicy = gasCostPolicyProblem(opts.policy, cost)
      if (overPolicy) {
        await denied(intent, 'gas_cost_exceeds_policy', { gasCostWei: cost.toString(), ...l1, maxGasCostWei: opts.policy.maxGasCostWei })
        return reply.code(403).send(policyDeniedBody([overPolicy]))
      }
      const params: SignParams = {
        intent,
        txRequest: tx,
        nonce: await nonceFor(intent, pending, nonces.next(pending)),
        gas: gas.toString(),
        maxFeePerGas: fees.maxFeePerGas.toString(),
        maxPriorityFeePerGas: fees.maxPriorityFeePerGas.toString(),
        // The signer cannot see why the gateway wants a token (its preflight); this makes it check one.
        ...(decision.decision === 'require_approval' ? { approvalRequired: true as const } : {}),
        ...(approvalTokenId ? { approvalTokenId } : {}),
      }
      const sign = async (p: SignParams): Promise<SignResult> => {
        try {
          return await signer.call<SignResult>(signerMethods.sign, p)
        } catch (err) {
          // A lost reply (signer killed, timeout) leaves params.nonce unmarked:
          // the next assignment takes the chain's pending count again, and if
          // the signer did sign at it, the retry finds that signature dead
          // below and replaces it.
          const mapped = signerFailure(err)
          if (mapped) throw mapped
          throw err
        }
      }
      let signed = await sign(params)
      req.phases?.mark('signer')
      // The signer had signed this intent before (we never saw the reply, or
      // its broadcast failed) at a nonce that is not the one we just gave.
      if (signed.repeated && signed.nonce !== params.nonce) {
        if ((await fateOf(intent, signed.nonce, signed.txHash)) === 'dead') {
          const dead = { txHash: signed.txHash, nonce: signed.nonce }
          // Known here from now on: when the replacement below needs an operator, approve-request finds this
          // transaction dead and asks one (without the record it would answer "allowed" with no token, forever).
          sentTxs.save(sentRecord(intent, built.txRequestHash, signed, false), clock())
          try {
            signed = await sign({ ...params, replaces: dead.txHash })
          } catch (err) {
            throw replacementRefusal(err, dead) ?? err
          }
        }
      }
      // Recorded before the broadcast: a gateway killed while the node takes the transaction still
      // knows at restart what it sent, and a retry sends that one again instead of judging anew.
      sentTxs.save(sentRecord(intent, built.txRequestHash, signed, false), clock())
      const result = await broadcastAndRecord(intent, built.txRequestHash, signed, req.phases)
      if (result.broadcast) nonces.used(signed.nonce)
      return result
    })
    // Whatever the task answered (or threw), policy_evaluated is committed first.
    await settleAll([policyAudited, sent])
    return sent
  })
}

/**
 * The signer checks a replacement's token like a first signature's (it cannot
 * see the chain, so a lying gateway gains no second mineable transaction of an
 * approved intent), and the token the lost transaction used is consumed. Says
 * so, and how to get the new approval: approve-request asks an operator again
 * for an intent whose transaction can never be mined.
 */
function replacementRefusal(err: unknown, dead: { txHash: Hex; nonce: number }): HttpError | null {
  if (!(err instanceof HttpError) || err.statusCode !== 403) return null
  const code = err.body.error
  if (code !== 'invalid_approval_token' && code !== 'approval_required') return null
  const message = `${replacementReason(dead)}. Signing it again needs a new approval: call POST /v1/tx/approve-request with the same intent, then sign-and-send with its approvalTokenId (the signer said: ${err.body.message ?? code})`
  return new HttpError(403, { ...err.body, message })
}


function sentRecord(intent: TxIntent, txRequestHash: string, signed: { signedTx: Hex; txHash: Hex; nonce: number }, broadcastOk: boolean) {
  return {
    intentId: intent.id,
    chainId: intent.chain.chainId,
    wallet: intent.wallet.address,
    txRequestHash,
    nonce: signed.nonce,
    txHash: signed.txHash,
    signedTx: signed.signedTx,
    broadcastOk,
    deadline: intent.constraints.deadline,
  }
}
