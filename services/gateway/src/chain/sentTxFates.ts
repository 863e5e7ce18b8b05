import { simpleErrorBody } from '@countersign/shared/http/errorBodies'
import { HttpError } from '@countersign/shared/http/errors'
import { isWithinDeadline, type Clock, type Hex, type PolicyDecision, type TxIntent } from '@countersign/shared'
import { rpcFailure, type ChainClients } from './chainClients.js'
import { txFate, type TxFate, type TxFateFound } from './txFate.js'
import type { SentTxs } from '../store/sentTxs.js'

/** A signed transaction of an intent that can never be mined: another of the wallet's own took its nonce. */
export interface DeadSignature {
  txHash: Hex
  nonce: number
}

export interface SentTxFates {
  /**
   * txFate against the wallet's own other transactions at that nonce. A fate
   * the node cannot tell, or one that is not settled yet (the transaction
   * that took the nonce is in a block newer than the node's safe block), is
   * a 502 saying to retry later: nothing is signed then.
   */
  fateOf(intent: TxIntent, nonce: number, txHash: Hex): Promise<Exclude<TxFate, 'unknown' | 'settling'>>
  /**
   * The intent's transaction as sent before, when it was built for the same
   * transaction (txRequestHash), with what sign-and-send would do with it:
   * `dead` (it can never be mined: signed again, with an operator), `expired`
   * (not mined, and its deadline has passed: not sent again), or `live`
   * (mined, or it still can be and may be sent: answered with it). Null when
   * there is none or the node cannot tell now.
   */
  signedBefore(intent: TxIntent, txRequestHash: string): Promise<SignedBefore | null>
}

/** An intent's transaction sent before, what became of it, and the deadline it is held to. */
export interface SignedBefore extends DeadSignature {
  fate: 'dead' | 'expired' | 'live'
  /** Mined (a `live` one may instead still be waiting to be, or never have reached a node). */
  mined: boolean
  deadline: number
}

/**
 * The deadline a transaction sent before is held to: the earliest of the
 * bodies it was signed or sent for and the retry's own. A transfer's deadline
 * is not in its transaction, so a retry naming a later one matches it.
 */
export function sentDeadline(sent: { deadline: number | null }, intent: TxIntent): number {
  return sent.deadline === null ? intent.constraints.deadline : Math.min(sent.deadline, intent.constraints.deadline)
}

/** Why a retry after the deadline gets no broadcast of the transaction signed before it; honest that the node may still hold it. */
export function notSentAfterDeadline(deadline: number, sent: { txHash: string; nonce: number }): string {
  return `deadline ${deadline} (${new Date(deadline * 1000).toISOString()}) has passed: transaction ${sent.txHash} (nonce ${sent.nonce}), signed before it and not mined, is not sent again; a node that still holds it may yet mine it`
}

/** Why a retry gets no broadcast of the transaction signed before it while policy denies its intent; as honest about the node. */
export function notSentWhileDenied(sent: { txHash: string; nonce: number }): string {
  return `transaction ${sent.txHash} (nonce ${sent.nonce}), signed before policy denied this intent and not mined, is not sent again; a node that still holds it may yet mine it`
}

/** What the gateway knows of the intents it sent (sent_txs) and what the chain says became of them. */
export function createSentTxFates(sentTxs: SentTxs, chains: ChainClients, clock: Clock): SentTxFates {
  async function fateOf(intent: TxIntent, nonce: number, txHash: Hex): Promise<Exclude<TxFate, 'unknown' | 'settling'>> {
    const { chainId } = intent.chain
    const others = sentTxs.atNonce(chainId, intent.wallet.address, nonce).map((t) => t.txHash as Hex)
    let found: TxFateFound
    try {
      found = await txFate(chains.get(chainId), intent.wallet.address, nonce, txHash, others)
    } catch (err) {
      throw rpcFailure(err, chainId)
    }
    if (found.fate === 'settling') {
      const { minedBy } = found
      throw new HttpError(
        502,
        simpleErrorBody(
          'rpc_error',
          `chain ${chainId}: transaction ${txHash} of this intent was not mined, and its nonce ${nonce} went to transaction ${minedBy.txHash} in block ${minedBy.block}, which the node does not count as safe yet (its safe block is ${minedBy.safeBlock}); until it is, a reorganisation could still let ${txHash} be mined, so nothing was signed again: retry once block ${minedBy.block} is safe (minutes on most chains)`,
        ),
      )
    }
    if (found.fate === 'unknown') {
      throw new HttpError(
        502,
        simpleErrorBody('rpc_error', `chain ${chainId}: nonce ${nonce} of transaction ${txHash} is used, but the node shows neither it nor another transaction of this wallet's there mined; nothing was signed again, retry later`),
      )
    }
    return found.fate
  }

  return {
    fateOf,
    async signedBefore(intent, txRequestHash) {
      const prior = sentTxs.byIntent(intent.id)
      if (!prior || prior.txRequestHash !== txRequestHash) return null
      try {
        const fate = await fateOf(intent, prior.nonce, prior.txHash as Hex)
        const deadline = sentDeadline(prior, intent)
        const expired = fate === 'open' && !isWithinDeadline(deadline, clock())
        return { txHash: prior.txHash as Hex, nonce: prior.nonce, deadline, fate: fate === 'dead' ? 'dead' : expired ? 'expired' : 'live', mined: fate === 'mined' }
      } catch {
        // Not known either way: the request goes on as for any intent, and sign-and-send looks again.
        return null
      }
    },
  }
}

/** What the operator reads first on a request to sign an intent again (approve-request) and what sign-and-send answers without a new approval. */
export function replacementReason(dead: DeadSignature): string {
  return `this intent was signed and sent before (transaction ${dead.txHash}, nonce ${dead.nonce}), and that transaction can never be mined: another transaction of this wallet's was mined at its nonce. Approving signs the same transaction again at a new nonce (the signer signs no replacement without an operator's approval, whatever policy allows, as it cannot see the chain itself); the approval given before, if any, was used by the transaction that was lost`
}

/**
 * An intent whose transaction was lost for good needs an operator to be
 * signed again, whatever policy allows: the signer refuses a replacement
 * without a fresh token (it cannot see the chain to tell a lost transaction
 * from a node's lie), so approve-request asks for one.
 */
export function requireApprovalToReplace(decision: PolicyDecision, dead: DeadSignature | null): PolicyDecision {
  if (!dead || decision.decision !== 'allow') return decision
  return { ...decision, decision: 'require_approval', reasons: [replacementReason(dead)], reasonCodes: ['replacing_lost_transaction'] }
}

/**
 * An intent whose transaction was sent before, never mined, and whose
 * deadline has passed is denied: sign-and-send would not send it again
 * (nor sign another), so nothing is there to approve.
 */
export function denyAfterDeadline(decision: PolicyDecision, before: SignedBefore | null): PolicyDecision {
  if (before?.fate !== 'expired' || decision.decision === 'deny') return decision
  return { ...decision, decision: 'deny', reasons: [notSentAfterDeadline(before.deadline, before)], reasonCodes: ['deadline_passed'] }
}
