import type Database from 'better-sqlite3'
import {
  AUDIT_CLOCK_SLACK_MS,
  BuildError,
  CheckpointRefusedError,
  RpcError,
  RPC_INVALID_PARAMS,
  SIGNING_REFUSED,
  buildAggregatorTransaction,
  buildTransaction,
  contractOf,
  isAggregatorIntent,
  sameAddress,
  evaluatePolicy,
  gasCostPolicyProblem,
  txFiguresProblem,
  intentHash as intentHashOf,
  type AccountInfo,
  type AuditLog,
  type Clock,
  type GrantParams,
  type GrantResult,
  type Hex,
  type PolicyConfig,
  type RouterTable,
  type SignParams,
  type SignResult,
  type SigningRefusal,
  type SigningRefusalData,
  type WalSync,
  type WalSyncStats,
} from '@countersign/shared'
import type { ApprovalTokens, TokenPurpose } from '../store/approvalTokens.js'
import type { Signatures, StoredSignature } from '../store/signatures.js'
import { createTurnTransactions } from '../store/turnTransactions.js'
import { createRowTimes } from '../store/rowTimes.js'
import { KeyUnavailableError, signTransactionWith, type SignedTransaction } from './keyBackend.js'
import type { KeyRing } from './keyRing.js'
import { sameTxRequest } from './sameTx.js'

export interface SignerCore {
  sign(params: SignParams): Promise<SignResult>
  /**
   * At start: the signatures a crash left without their audited flag. Those
   * whose event is missing get it now, marked late (`late`); those whose
   * event is in the log get the flag back, and no second event (`logged`).
   */
  auditMissed(): Promise<MissedAudits>
  /** Mints a token; answers once it is committed, its fsync started (see GrantResult). */
  grantApproval(params: GrantParams): Promise<GrantResult>
  /** Resolves once every token minted before the call is on disk. */
  grantsDurable(): Promise<Record<string, never>>
  accounts(): AccountInfo[]
  /** Group commit observed: signatures stored, and what each database's fsyncs covered. */
  durability(): SignerDurability
}

export interface MissedAudits {
  late: number
  logged: number
}

export interface SignerDurability {
  signatures: number
  /** process.cpuUsage(): with `signatures`, the signer's CPU per signature (all threads). */
  cpuUs: { user: number; system: number }
  signerDb: WalSyncStats
  auditDb: WalSyncStats | undefined
  /** signer.db's per-turn transactions (signatures stored, audited flags set) and the jobs they held. */
  storeTransactions: { transactions: number; jobs: number }
}

export interface SignerCoreDeps {
  db: Database.Database
  /**
   * Makes signer.db's commits durable (it runs with synchronous=NORMAL): no
   * reply leaves before the commits it reports on, or read, are on disk, and
   * the signatures that arrive together share one fsync.
   */
  wal: WalSync
  tokens: ApprovalTokens
  signatures: Signatures
  keys: KeyRing
  policy: PolicyConfig
  routers: RouterTable
  audit: AuditLog
  clock: Clock
  /** The one chain dev keys may sign for, from the signer's own configuration; null: none. */
  devChainId: number | null
}

const REFUSAL_TEXT: Record<SigningRefusal, string> = {
  missing_policy_decision: 'no policy decision could be made',
  policy_deny: 'policy denies this intent',
  missing_approval_token: 'policy requires approval and no approval token was given',
  invalid_approval_token: 'the approval token is unknown, expired, consumed, or bound to another transaction, another intent or another purpose (a replacement takes only a token given to replace that very transaction)',
  key_locked: 'no unlocked key for this wallet',
  tx_mismatch: 'the transaction does not match the one built from the intent',
  gas_cost_exceeds_max: 'gas limit times max fee exceeds constraints.maxGasWei',
  intent_conflict: 'this intent id was already signed for a different transaction',
  dev_key_on_remote_chain: "a development key may sign only for the signer's own development chain (SERVICE_SIGNER_DEV_CHAIN_ID)",
  key_unavailable: "this wallet's key is on a hardware token the signer cannot reach right now; nothing was signed, retry later",
}

/**
 * Whether a sign call for an already signed intent asks to replace its stored
 * signature: it names that signature's txHash and gives a higher nonce. The
 * signer has no network and cannot see the chain; it takes the gateway's word
 * that the stored transaction can never be mined, and bounds what a lying
 * gateway (or the node it believed) could gain: the replacement passes the
 * same policy (with every replaced signature counted against the rate limit)
 * as a first signature, and always needs a new operator's approval token,
 * whatever policy says: a second mineable transaction of one intent is never
 * signed without a human.
 */
function isReplacement(p: SignParams, prior: StoredSignature): boolean {
  return p.replaces !== undefined && p.replaces.toLowerCase() === prior.txHash.toLowerCase() && p.nonce > prior.nonce
}

/**
 * The seven steps of DESIGN.md §2, done by the signer with its own state:
 * validate (the RPC layer), rebuild and compare, hash, offline policy with its
 * own counter, token verify-and-consume, gas cap and deadline, sign. Every
 * refusal is audited as signing_denied and thrown as SIGNING_REFUSED.
 */
export function createSignerCore(deps: SignerCoreDeps): SignerCore {
  const { db, wal, tokens, signatures, keys, policy, routers, audit, clock } = deps
  const rowTime = createRowTimes(db, clock)
  let stored = 0
  const storeTurn = createTurnTransactions(db)

  // The audited flags of a batch, set in the next turn's transaction (with
  // the signatures stored in it, if any). Nothing replies about them: a flag
  // lost in a power cut or a failed write only makes a repeat look for the
  // event in audit.db, or the next start write it again, marked late.
  // Keyed by intent and transaction: a replacement of the intent stored
  // before the flag is written must not take the flag of the signature it
  // replaced (its own event may never commit; found by review).
  const toMark = new Map<string, { intentId: string; txHash: string }>()
  const markKey = (s: { intentId: string; txHash: string }) => `${s.intentId} ${s.txHash}`
  function markAuditedSoon(s: StoredSignature): void {
    if (toMark.size === 0) {
      storeTurn
        .run(() => {
          const marks = [...toMark.values()]
          toMark.clear()
          for (const m of marks) signatures.markAudited(m.intentId, m.txHash)
        })
        // signer.db closed under it (shutdown) or locked: these flags are dropped (see above), and the next one schedules afresh.
        .catch(() => toMark.clear())
    }
    toMark.set(markKey(s), { intentId: s.intentId, txHash: s.txHash })
  }
  const isAudited = (s: StoredSignature) => toMark.has(markKey(s)) || signatures.isAudited(s.intentId, s.txHash)
  // Audit appends not yet durable, by intent: a repeat of the intent meanwhile
  // answers after the same event, and neither writes it again nor answers
  // before it is on disk.
  const auditsInFlight = new Map<string, Promise<void>>()

  async function refuse(intentId: string, reason: SigningRefusal, context: Record<string, unknown> = {}, extra: Partial<SigningRefusalData> = {}): Promise<never> {
    // A refusal may rest on state not yet on disk (a token another call just
    // consumed): it waits for that state's fsync too.
    await Promise.all([audit.append({ intentId, event: 'signing_denied', data: { reason, ...context } }), wal.durable()])
    const detail = extra.reasons?.length ? `: ${extra.reasons.join('; ')}` : ''
    throw new RpcError(SIGNING_REFUSED, `${REFUSAL_TEXT[reason]}${detail}`, { reason, ...extra } satisfies SigningRefusalData)
  }

  const eventOf = (s: StoredSignature) => (s.replacesTxHash ? 'signature_replaced' : 'signature_created')

  // A signature whose audited flag is unset may still have its event: a kill
  // between the event's commit and the flag's (one tick later) leaves both.
  // The log is the record; the flag only saves this walk, which goes back
  // from the newest row to the oldest signature's own time, and the clock
  // slack before it: a signature's time (createRowTimes) runs ahead of the
  // wall clock that stamps its event by as much as the clock was stepped back.
  const eventKey = (event: string, intentId: string, txHash: unknown) => `${event} ${intentId} ${String(txHash)}`
  function loggedSince(sinceMs: number): Map<string, Record<string, unknown>> {
    const events = audit.eventsSince(['signature_created', 'signature_replaced'], sinceMs - AUDIT_CLOCK_SLACK_MS)
    return new Map(events.map((e) => [eventKey(e.event, e.intentId, e.data.txHash), e.data]))
  }

  /**
   * Late events for signatures stored without one, unless the log has them
   * after all: an event that says what signer.db says, sealed by a checkpoint
   * signed now (when the seal is not refused). Found by review: another
   * writer of audit.db could write a signature's event with other data, and
   * a repeat of the intent took that row as its record.
   */
  async function auditLate(missed: StoredSignature[]): Promise<MissedAudits> {
    const counts = { late: 0, logged: 0 }
    if (missed.length === 0) return counts
    const logged = loggedSince(missed.reduce((min, s) => Math.min(min, s.createdAt), Infinity))
    const found: StoredSignature[] = []
    for (const s of missed) {
      const data = logged.get(eventKey(eventOf(s), s.intentId, s.txHash))
      if (data && sameSignatureData(data, s)) {
        found.push(s)
      } else {
        await auditSignature(s, true)
        counts.late += 1
      }
    }
    if (found.length > 0) {
      await audit.checkpoint().catch(unsealedIsWritten)
      for (const s of found) markAuditedSoon(s)
      counts.logged = found.length
    }
    return counts
  }

  /** The stored signature's own fields against its event's (the event may be a late one). */
  function sameSignatureData(data: Record<string, unknown>, s: StoredSignature): boolean {
    const same = (a: unknown, b: string | null) => (typeof a === 'string' && b !== null ? a.toLowerCase() === b.toLowerCase() : a === b)
    return (
      same(data.txRequestHash, s.txRequestHash) &&
      same(data.signerAddress, s.signerAddress) &&
      data.nonce === s.nonce &&
      same(data.tokenId, s.tokenId) &&
      same(data.replacedTxHash ?? null, s.replacesTxHash)
    )
  }

  /**
   * A seal refused because audit.db was changed outside countersign: the
   * checkpointer has raised the alarm, the event itself is committed and
   * durable, and signing goes on. Refusing to sign instead was tried and
   * undone (found by the review of that change): a backup of audit.db never
   * holds the last checkpoint, so nothing could end the outage, and any
   * writer of audit.db could stop every signature. countersign-audit verify
   * holds every signature signer.db keeps against the log, so an event
   * deleted or rewritten before a later seal is still reported.
   */
  const unsealedIsWritten = (err: unknown): void => {
    if (!(err instanceof CheckpointRefusedError)) throw err
  }

  function auditSignature(s: StoredSignature, late: boolean): Promise<void> {
    const appended = appendSignatureEvent(s, late)
    auditsInFlight.set(s.intentId, appended)
    const forget = () => {
      if (auditsInFlight.get(s.intentId) === appended) auditsInFlight.delete(s.intentId)
    }
    appended.then(forget, forget)
    return appended
  }

  /** What a repeat of an already signed intent waits for before it answers: its signature's event, durable. */
  function signatureAudited(s: StoredSignature): Promise<unknown> | undefined {
    return auditsInFlight.get(s.intentId) ?? (isAudited(s) ? undefined : auditLate([s]))
  }

  async function appendSignatureEvent(s: StoredSignature, late: boolean): Promise<void> {
    const data = { txRequestHash: s.txRequestHash, signerAddress: s.signerAddress, txHash: s.txHash, nonce: s.nonce, tokenId: s.tokenId, ...(late ? { late: true } : {}) }
    // A replacement names both transactions: the one that can never be mined and the one that replaces it.
    const replaced = s.replacesTxHash ? signatures.replaced(s.replacesTxHash) : undefined
    const event = s.replacesTxHash
      ? { intentId: s.intentId, event: eventOf(s), data: { ...data, replacedTxHash: s.replacesTxHash, replacedNonce: replaced?.nonce ?? null } }
      : { intentId: s.intentId, event: eventOf(s), data }
    // Sealed by a signed checkpoint before the same fsync (DESIGN §6 "audit anchoring"), unless the seal is refused.
    await audit.append(event, { checkpoint: true }).catch(unsealedIsWritten)
    markAuditedSoon(s)
  }

  const fromStored = (s: StoredSignature, repeated: boolean): SignResult => ({
    intentId: s.intentId,
    txHash: s.txHash as Hex,
    signedTx: s.signedTx as Hex,
    signerAddress: s.signerAddress,
    nonce: s.nonce,
    repeated,
  })

  const policyFor = (p: SignParams, nowMs: number, contract: string | null) =>
    evaluatePolicy(policy, p.intent, {
      nowMs,
      recentTxCount: signatures.recentCount(p.intent.wallet.address, nowMs),
      contract: contract as `0x${string}` | null,
    })

  return {
    async sign(p) {
      const intent = p.intent
      const intentId = intent.id
      const wallet = intent.wallet.address

      // 2. rebuild from the intent and compare with what the gateway sent; an
      // aggregator swap cannot be rebuilt, so its calldata is decoded and
      // checked against the intent instead.
      const viaAggregator = isAggregatorIntent(intent) && sameAddress(p.txRequest.to, routers.aggregator)
      let built
      try {
        built = viaAggregator ? buildAggregatorTransaction(intent, { to: p.txRequest.to, data: p.txRequest.data }, routers) : buildTransaction(intent, routers)
      } catch (err) {
        if (err instanceof BuildError) return refuse(intentId, 'tx_mismatch', { error: err.message })
        throw err
      }
      if (!sameTxRequest(built.txRequest, p.txRequest)) return refuse(intentId, 'tx_mismatch', { txRequestHash: built.txRequestHash })
      const contract = viaAggregator ? routers.aggregator : contractOf(intent, routers)
      // 3. the hashes the approval binds to, computed here: the transaction,
      // and the exact intent the operator approved (a stolen token id is
      // useless with any other intent).
      const txRequestHash = built.txRequestHash
      const binding = { txRequestHash, intentHash: intentHashOf(intent) }

      // Idempotency: an intent signed before gets its stored transaction
      // back, unless the gateway says that transaction can never be mined
      // (DESIGN §6 "crash window"): then it is signed again below, at a
      // higher nonce, as if for the first time, and replaces the stored one.
      const prior = signatures.byIntent(intentId)
      let replacing: StoredSignature | undefined
      if (prior) {
        if (prior.txRequestHash !== txRequestHash) return refuse(intentId, 'intent_conflict', { txRequestHash })
        if (!isReplacement(p, prior)) {
          // The stored signature may be a commit whose fsync is still running.
          await Promise.all([signatureAudited(prior), wal.durable()])
          return fromStored(prior, true)
        }
        replacing = prior
      }

      // A wallet without a key here is refused before policy: its per-wallet
      // counter would otherwise be loaded and kept for the life of the process,
      // one for every address anyone on the socket names (found by review).
      const key = keys.get(wallet)
      if (!key) return refuse(intentId, 'key_locked', { signerAddress: wallet.toLowerCase() })
      if (key.dev && intent.chain.chainId !== deps.devChainId) {
        return refuse(intentId, 'dev_key_on_remote_chain', { signerAddress: key.address, chainId: intent.chain.chainId, devChainId: deps.devChainId })
      }

      // 4. offline policy with the signer's own policy file and counter.
      const decision = policyFor(p, clock(), contract)
      if (decision.decision === 'deny') {
        return refuse(intentId, 'policy_deny', { reasons: decision.reasons, reasonCodes: decision.reasonCodes }, { reasons: decision.reasons })
      }
      // 5. (check) approval token when policy requires one; consumed below.
      // The gateway may ask for a token for reasons only it can see (its
      // preflight: nothing could be simulated). That can only add a check.
      // A replacement always needs one: the signer cannot see the chain, and
      // a lying node or gateway that calls a mined transaction lost would
      // otherwise get the intent paid twice with nobody asked.
      const needsToken = decision.decision === 'require_approval' || p.approvalRequired === true || replacing !== undefined
      // A replacement takes only a token minted to replace this very signature (TokenPurpose).
      const purpose: TokenPurpose = replacing ? { replaces: replacing.txHash, replacedAt: replacing.createdAt } : null
      if (needsToken) {
        if (!p.approvalTokenId) return refuse(intentId, 'missing_approval_token', { txRequestHash, ...(replacing ? { replaces: replacing.txHash } : {}) }, { txRequestHash })
        // A replacement takes only an approval given after the signature it replaces: a token the first
        // signature did not need (policy allowed it) would otherwise pay for a second transaction (found by review).
        const problem = tokens.check(p.approvalTokenId, binding, clock(), purpose)
        if (problem) return refuse(intentId, 'invalid_approval_token', { tokenId: p.approvalTokenId, problem }, { txRequestHash })
      }

      // 6. the fee cap; the deadline was part of the policy check.
      const gas = BigInt(p.gas)
      const maxFeePerGas = BigInt(p.maxFeePerGas)
      const maxPriorityFeePerGas = BigInt(p.maxPriorityFeePerGas)
      // Figures no transaction can carry are refused before anything is signed or a token consumed.
      const unsignable = txFiguresProblem({ gas, maxFeePerGas, maxPriorityFeePerGas })
      if (unsignable) throw new RpcError(RPC_INVALID_PARAMS, unsignable)
      const cost = gas * maxFeePerGas
      if (cost > BigInt(intent.constraints.maxGasWei)) {
        return refuse(intentId, 'gas_cost_exceeds_max', { gasCostWei: cost.toString(), maxGasWei: intent.constraints.maxGasWei })
      }
      // The operator's own ceiling on fees, in the signer's copy of the policy: the intent's figure is its author's.
      const overPolicy = gasCostPolicyProblem(policy, cost)
      if (overPolicy) return refuse(intentId, 'policy_deny', { reasons: [overPolicy], reasonCodes: ['gas_cost_exceeds_policy'] }, { reasons: [overPolicy] })

      // 7. sign, then store the signature and consume the token in one
      // transaction; a signature that loses a race is dropped unreturned.
      let signed: SignedTransaction
      try {
        signed = await signTransactionWith(key, {
          type: 'eip1559',
          chainId: built.txRequest.chainId,
          nonce: p.nonce,
          to: built.txRequest.to,
          data: built.txRequest.data,
          value: BigInt(built.txRequest.value),
          gas,
          maxFeePerGas,
          maxPriorityFeePerGas,
        })
      } catch (err) {
        // Nothing is stored and no token consumed: the same call may be retried.
        if (err instanceof KeyUnavailableError) return refuse(intentId, 'key_unavailable', { signerAddress: key.address.toLowerCase(), backend: key.backend, error: err.message })
        throw err
      }
      const { signedTx, txHash } = signed
      const nowMs = rowTime()
      const record: StoredSignature = {
        intentId,
        txRequestHash,
        signerAddress: key.address.toLowerCase(),
        chainId: built.txRequest.chainId,
        nonce: p.nonce,
        signedTx,
        txHash,
        tokenId: needsToken ? p.approvalTokenId! : null,
        createdAt: nowMs,
        replacesTxHash: replacing?.txHash ?? null,
      }
      type Outcome = { kind: 'stored' } | { kind: 'repeat'; prior: StoredSignature } | { kind: 'token'; problem: string } | { kind: 'deny'; reasons: string[]; codes: string[] }
      // Stored in this turn's transaction, with the other signatures that finished in it (turnTransactions.ts).
      const outcome = await storeTurn.run((): Outcome => {
        const raced = signatures.byIntent(intentId)
        // Another call stored or replaced this intent's signature meanwhile: that one stands.
        if (raced && raced.txHash !== replacing?.txHash) return { kind: 'repeat', prior: raced }
        // The counter may have moved while we were signing; check again inside the transaction.
        const again = policyFor(p, nowMs, contract)
        if (again.decision === 'deny') return { kind: 'deny', reasons: again.reasons, codes: again.reasonCodes }
        if (needsToken) {
          const problem = tokens.consume(p.approvalTokenId!, binding, nowMs, purpose)
          if (problem) return { kind: 'token', problem }
        }
        if (replacing) signatures.replace(replacing, record, nowMs)
        else signatures.insert(record)
        return { kind: 'stored' }
      })
      if (outcome.kind === 'stored') wal.committed()
      switch (outcome.kind) {
        case 'repeat':
          if (outcome.prior.txRequestHash === txRequestHash) {
            await Promise.all([signatureAudited(outcome.prior), wal.durable()])
            return fromStored(outcome.prior, true)
          }
          return refuse(intentId, 'intent_conflict', { txRequestHash })
        case 'token':
          return refuse(intentId, 'invalid_approval_token', { tokenId: p.approvalTokenId, problem: outcome.problem }, { txRequestHash })
        case 'deny':
          return refuse(intentId, 'policy_deny', { reasons: outcome.reasons, reasonCodes: outcome.codes }, { reasons: outcome.reasons })
        case 'stored':
          break
      }
      // Group commit: the signature and token consumption (signer.db) and its
      // audit event (audit.db) are fsynced in parallel, each fsync shared by
      // every signature committed before it started; the reply waits for both.
      // (A power cut between the two can leave the event of a signature that
      // was never replied; never a replied signature without its record.)
      await Promise.all([wal.durable(), auditSignature(record, false)])
      stored += 1
      return fromStored(record, false)
    },

    async auditMissed() {
      return auditLate(signatures.unaudited())
    },

    async grantApproval({ txRequestHash, intentHash, intentId, replacing }) {
      const token = tokens.mint({ txRequestHash, intentHash, intentId, ...(replacing ? { replaces: replacing } : {}) }, rowTime())
      wal.committed()
      // The fsync starts now; the approver waits for it (grantsDurable) while
      // it commits its own rows, instead of before. A failed fsync fails that wait.
      wal.durable().catch(() => undefined)
      return { approvalTokenId: token.id, expiresAt: token.expiresAt }
    },

    async grantsDurable() {
      await wal.durable()
      return {}
    },

    durability() {
      return { signatures: stored, cpuUs: process.cpuUsage(), signerDb: wal.stats(), auditDb: audit.syncStats(), storeTransactions: storeTurn.stats() }
    },

    accounts() {
      return keys.all().map((k) => ({ address: k.address, label: k.label, dev: k.dev, unlocked: true, backend: k.backend }))
    },
  }
}
