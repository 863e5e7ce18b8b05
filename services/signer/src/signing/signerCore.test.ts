// The signing boundary in-process: real SQLite files, real keys, real
// signatures, an injected clock instead of sleeping.
import { randomUUID } from 'node:crypto'
import Database from 'better-sqlite3'
import { mkdtempSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { hexToBytes, parseTransaction, recoverTransactionAddress, type Hex } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterEach, describe, expect, it, vi } from 'vitest'
import {
  AGGREGATOR_ROUTER,
  buildTransaction,
  defaultPolicyConfig,
  defaultRouterTable,
  intentHash,
  RpcError,
  SIGNING_REFUSED,
  type AuditLog,
  type PolicyConfig,
  type SignParams,
  type TxIntent,
} from '@countersign/shared'
import { actions, makeIntent } from '@countersign/shared/testing/intents'
import { aggregatorSwapCalldata } from '@countersign/shared/testing/aggregator'
import { createApprovalTokens } from '../store/approvalTokens.js'
import { openSignerDb } from '../store/signerDb.js'
import { createSignatures } from '../store/signatures.js'
import { keystoreRingKey } from '../keystore/keystoreBackend.js'
import { KeyUnavailableError, type RingKey } from './keyBackend.js'
import { keyRingOf } from './keyRing.js'
import { signingKeyOf } from './secp256k1.js'
import { openSignerAudit } from '../audit/signerAudit.js'
import { checkpointSignatureValid } from '@countersign/shared'
import { loadAuditAnchor, verifyAuditChain } from '@countersign/shared/server'
import { createSignerCore, type SignerCoreDeps } from './signerCore.js'

const KEY = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d'
const account = privateKeyToAccount(KEY)
const signingKey = signingKeyOf(hexToBytes(KEY))
const routers = defaultRouterTable()

let audit: AuditLog | undefined
afterEach(async () => { await audit?.close() })

function setup(opts: { policy?: Partial<PolicyConfig>; dev?: boolean; keys?: boolean; ringKey?: RingKey; devChainId?: number | null } = {}) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cs-signer-'))
  let now = Date.UTC(2026, 10, 22, 12)
  const clock = () => now
  const { db, wal } = openSignerDb(path.join(dir, 'signer.db'))
  const signerAudit = openSignerAudit(dir, db, clock)
  audit = signerAudit.audit
  const tokens = createApprovalTokens(db)
  // While down, appends fail as if the process died before the event's commit;
  // while held, they wait (an fsync that takes its time).
  const auditLink: { down: boolean; held: Promise<void> | null } = { down: false, held: null }
  const inner = audit
  const coreAudit: AuditLog = Object.create(inner, {
    append: {
      value: async (e: Parameters<AuditLog['append']>[0], o?: Parameters<AuditLog['append']>[1]) => {
        if (auditLink.down) throw new Error('no audit commit (simulated kill)')
        await auditLink.held
        return inner.append(e, o)
      },
    },
  })
  const signatures = createSignatures(db)
  const deps: SignerCoreDeps = {
    db,
    wal,
    tokens,
    signatures,
    keys: keyRingOf(opts.keys === false ? [] : [opts.ringKey ?? keystoreRingKey({ address: account.address, signingKey, label: null, dev: opts.dev ?? false })]),
    policy: { ...defaultPolicyConfig(), ...opts.policy },
    routers,
    audit: coreAudit,
    clock,
    devChainId: opts.devChainId ?? null,
  }
  const core = createSignerCore(deps)
  const advance = (ms: number) => {
    now += ms
  }
  const intent = (o: Parameters<typeof makeIntent>[0] = {}) => makeIntent({ wallet: account.address, nowMs: now, ...o })
  const params = (i: TxIntent, extra: Partial<SignParams> = {}): SignParams => ({
    intent: i,
    txRequest: buildTransaction(i, routers).txRequest,
    nonce: 0,
    gas: '60000',
    maxFeePerGas: '2000000000',
    maxPriorityFeePerGas: '1000000000',
    ...extra,
  })
  const bindingOf = (i: TxIntent) => ({ txRequestHash: buildTransaction(i, routers).txRequestHash, intentHash: intentHash(i) })
  const grant = async (i: TxIntent, replacing?: Hex) => (await core.grantApproval({ ...bindingOf(i), intentId: i.id, ...(replacing ? { replacing } : {}) })).approvalTokenId
  const reason = (p: Promise<unknown>) =>
    p.then(
      () => 'signed',
      (e: RpcError) => {
        expect(e).toBeInstanceOf(RpcError)
        expect(e.code).toBe(SIGNING_REFUSED)
        return (e.data as { reason: string }).reason
      },
    )
  // The checkpoints sealing each signature are checked on their own below.
  const events = () => audit!.list({ limit: 1000 }).filter((e) => e.event !== 'checkpoint')
  return { core, deps, tokens, signatures, clock, advance, intent, params, grant, bindingOf, reason, events, db, signerAudit, dir, auditLink }
}

describe('signer core', () => {
  it('signs an allowed intent as EIP-1559 from the wallet, and audits signature_created', async () => {
    const s = setup()
    const i = s.intent({ action: actions.transfer() })
    const r = await s.core.sign(s.params(i, { nonce: 7 }))
    const tx = parseTransaction(r.signedTx)
    expect(tx).toMatchObject({ type: 'eip1559', chainId: 8453, nonce: 7, gas: 60000n, maxFeePerGas: 2000000000n })
    expect(await recoverTransactionAddress({ serializedTransaction: r.signedTx as never })).toBe(account.address)
    expect(r).toMatchObject({ intentId: i.id, repeated: false, nonce: 7 })
    const [e] = s.events()
    expect(e).toMatchObject({ event: 'signature_created', intentId: i.id, data: { txHash: r.txHash, signerAddress: account.address.toLowerCase() } })
  })

  it("refuses fees above the policy's maxGasCostWei whatever the intent's maxGasWei says (a gateway or node quoting 500 ETH of priority fee for a USDC transfer)", async () => {
    const s = setup()
    const i = s.intent({ action: actions.transfer('1'), maxGasWei: '1' + '0'.repeat(24) })
    const drain = { gas: '60000', maxFeePerGas: '1' + '0'.repeat(16), maxPriorityFeePerGas: '1' + '0'.repeat(16) }
    expect(await s.reason(s.core.sign(s.params(i, drain)))).toBe('policy_deny')
    expect(s.events()).toMatchObject([{ event: 'signing_denied', data: { reason: 'policy_deny', reasonCodes: ['gas_cost_exceeds_policy'], reasons: [`gas cost 600000000000000000000 wei exceeds the policy's maxGasCostWei of 50000000000000000 wei`] } }])
    // Within the cap it signs; a policy with no cap (null) leaves only the intent's figure.
    expect(await s.reason(s.core.sign(s.params(i)))).toBe('signed')
    const open = setup({ policy: { maxGasCostWei: null } })
    expect(await open.reason(open.core.sign(open.params(open.intent({ action: actions.transfer('1'), maxGasWei: '1' + '0'.repeat(24) }), drain)))).toBe('signed')
  })

  it.each([
    ['a fee cap beyond 256 bits', { gas: '21000', maxFeePerGas: '9'.repeat(78), maxPriorityFeePerGas: '1' }, /maxFeePerGas .* does not fit 256 bits/],
    ['a gas limit beyond 64 bits at a fee of 0', { gas: '9'.repeat(78), maxFeePerGas: '0', maxPriorityFeePerGas: '0' }, /64-bit field/],
    ['a gas limit below 21,000', { gas: '0', maxFeePerGas: '1', maxPriorityFeePerGas: '1' }, /below the 21000/],
  ])('refuses %s as invalid params before signing: no signature stored, the approval token not consumed', async (_what, figures, problem) => {
    const s = setup({ policy: { requireApprovalAbove: { valueWei: '0' } } })
    const i = s.intent({ action: actions.native('1000'), maxGasWei: '9'.repeat(78) })
    const token = await s.grant(i)
    const refused = await s.core.sign(s.params(i, { ...figures, approvalTokenId: token, approvalRequired: true })).catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(RpcError)
    expect((refused as RpcError).code).toBe(-32602)
    expect((refused as RpcError).message).toMatch(problem)
    expect(s.events().filter((e) => e.event === 'signature_created')).toEqual([])
    // The same intent with figures a node accepts still signs with that token.
    const r = await s.core.sign(s.params(i, { approvalTokenId: token, approvalRequired: true }))
    expect(r.repeated).toBe(false)
  })

  it('seals each signature with a checkpoint in the same commit, signed with the audit key and recorded in signer.db', async () => {
    const s = setup()
    const i = s.intent({ action: actions.transfer() })
    await s.core.sign(s.params(i))
    const [cp, sig] = s.signerAudit.audit.list({ limit: 2 })
    expect(sig).toMatchObject({ event: 'signature_created', intentId: i.id })
    expect(cp).toMatchObject({ event: 'checkpoint', intentId: 'system', data: { key: s.signerAudit.key.fingerprint } })
    const head = s.signerAudit.audit.head()
    const latest = s.signerAudit.checkpoints.latest()
    expect(latest).toMatchObject({ seq: head.seq, hash: head.hash, sealed: { seq: head.seq - 1 } })
    expect(cp!.data).toMatchObject({ seq: head.seq - 1, headHash: latest!.sealed.hash })
    const d = cp!.data as { seq: number; headHash: string; signature: string }
    expect(checkpointSignatureValid(s.signerAudit.key.publicKey, d.seq, d.headHash, d.signature)).toBe(true)
    expect(verifyAuditChain(path.join(s.dir, 'audit.db'), { publicKey: s.signerAudit.key.publicKey, latest })).toMatchObject({ ok: true, checkpoints: 1 })
  })

  it('a key its backend cannot reach now: key_unavailable, nothing stored, the approval token left for the retry', async () => {
    const real = keystoreRingKey({ address: account.address, signingKey, label: 'hsm', dev: false })
    let unplugged = true
    const token: RingKey = { ...real, backend: 'pkcs11', signDigest: (d) => (unplugged ? Promise.reject(new KeyUnavailableError('the PKCS#11 token "t" did not sign')) : real.signDigest(d)) }
    const s = setup({ ringKey: token })
    const i = s.intent({ action: actions.native('1000') })
    const approval = await s.grant(i)
    expect(await s.reason(s.core.sign(s.params(i, { approvalTokenId: approval })))).toBe('key_unavailable')
    expect(s.events()).toMatchObject([{ event: 'signing_denied', intentId: i.id, data: { reason: 'key_unavailable', backend: 'pkcs11', signerAddress: account.address.toLowerCase() } }])
    unplugged = false
    const signed = await s.core.sign(s.params(i, { approvalTokenId: approval }))
    expect(signed.repeated).toBe(false)
    expect(await recoverTransactionAddress({ serializedTransaction: signed.signedTx as never })).toBe(account.address)
  })

  it('is idempotent per intent id: the same signed transaction, no second signature', async () => {
    const s = setup()
    const i = s.intent({ action: actions.transfer() })
    const first = await s.core.sign(s.params(i))
    const second = await s.core.sign(s.params(i, { nonce: 99, maxFeePerGas: '3000000000' }))
    expect(second).toEqual({ ...first, repeated: true })
    expect(s.events().filter((e) => e.event === 'signature_created')).toHaveLength(1)
  })

  describe('the crash window: a stored signature whose nonce went to another transaction', () => {
    it('two intents whose transactions were byte for byte the same (one nonce) can each be replaced', async () => {
      const s = setup()
      const a = s.intent({ action: actions.transfer() })
      const b = s.intent({ action: actions.transfer() })
      const a1 = await s.core.sign(s.params(a, { nonce: 3 }))
      const b1 = await s.core.sign(s.params(b, { nonce: 3 }))
      expect(b1.txHash).toBe(a1.txHash)
      s.advance(1) // the replacement's approval comes after the signature it replaces
      const a2 = await s.core.sign(s.params(a, { nonce: 5, replaces: a1.txHash, approvalTokenId: await s.grant(a, a1.txHash) }))
      s.advance(1) // the replacement's approval comes after the signature it replaces
      const b2 = await s.core.sign(s.params(b, { nonce: 6, replaces: b1.txHash, approvalTokenId: await s.grant(b, b1.txHash) }))
      expect([a2.repeated, b2.repeated]).toEqual([false, false])
      expect(b2.nonce).toBe(6)
      expect(s.events().filter((e) => e.event === 'signature_replaced').map((e) => e.intentId).sort()).toEqual([a.id, b.id].sort())
    })

    it('is replaced only when the gateway names it and gives a higher nonce; audited signature_replaced with both hashes', async () => {
      const s = setup()
      const i = s.intent({ action: actions.transfer() })
      const first = await s.core.sign(s.params(i, { nonce: 3 }))
      // Without a claim, or with a claim about another transaction, or at a nonce not above it: the stored one.
      expect(await s.core.sign(s.params(i, { nonce: 5 }))).toEqual({ ...first, repeated: true })
      expect(await s.core.sign(s.params(i, { nonce: 5, replaces: `0x${'ab'.repeat(32)}` }))).toEqual({ ...first, repeated: true })
      expect(await s.core.sign(s.params(i, { nonce: 3, replaces: first.txHash }))).toEqual({ ...first, repeated: true })
      s.advance(1) // the replacement's approval comes after the signature it replaces
      const second = await s.core.sign(s.params(i, { nonce: 5, replaces: first.txHash, approvalTokenId: await s.grant(i, first.txHash) }))
      expect(second).toMatchObject({ intentId: i.id, nonce: 5, repeated: false })
      expect(second.txHash).not.toBe(first.txHash)
      expect(parseTransaction(second.signedTx)).toMatchObject({ nonce: 5, to: parseTransaction(first.signedTx).to, data: parseTransaction(first.signedTx).data })
      const [replaced] = s.events()
      expect(replaced).toMatchObject({ event: 'signature_replaced', intentId: i.id, data: { txHash: second.txHash, nonce: 5, replacedTxHash: first.txHash, replacedNonce: 3 } })
      // The replacement is now the intent's one signature; the same claim again changes nothing.
      expect(await s.core.sign(s.params(i, { nonce: 9 }))).toEqual({ ...second, repeated: true })
      expect(await s.core.sign(s.params(i, { nonce: 9, replaces: first.txHash }))).toEqual({ ...second, repeated: true })
      expect(s.db.prepare('SELECT tx_hash, nonce, replaced_by FROM replaced_signatures').all()).toEqual([{ tx_hash: first.txHash, nonce: 3, replaced_by: second.txHash }])
      // A replacement cut off from its audit event is audited late as a replacement.
      s.auditLink.down = true
      s.advance(1) // the replacement's approval comes after the signature it replaces
      await expect(s.core.sign(s.params(i, { nonce: 11, replaces: second.txHash, approvalTokenId: await s.grant(i, second.txHash) }))).rejects.toThrow(/simulated kill/)
      s.auditLink.down = false
      expect(await s.core.auditMissed()).toEqual({ late: 1, logged: 0 })
      expect(s.events()[0]).toMatchObject({ event: 'signature_replaced', data: { late: true, nonce: 11, replacedTxHash: second.txHash } })
      // Its flag lost again with the event in the log: nothing written twice.
      s.db.prepare('UPDATE signatures SET audited = 0 WHERE intent_id = ?').run(i.id)
      expect(await s.core.auditMissed()).toEqual({ late: 0, logged: 1 })
      expect(s.events().filter((e) => e.event === 'signature_replaced')).toHaveLength(2)
    })

    it('needs what a first signature needs: the consumed token cannot sign twice, a fresh approval can', async () => {
      const s = setup()
      const i = s.intent({ action: actions.native('1000') })
      const token = await s.grant(i)
      const first = await s.core.sign(s.params(i, { nonce: 0, approvalTokenId: token }))
      expect(await s.reason(s.core.sign(s.params(i, { nonce: 1, approvalTokenId: token, replaces: first.txHash })))).toBe('invalid_approval_token')
      expect(await s.reason(s.core.sign(s.params(i, { nonce: 1, replaces: first.txHash })))).toBe('missing_approval_token')
      s.advance(1) // the replacement's approval comes after the signature it replaces
      const again = await s.core.sign(s.params(i, { nonce: 1, approvalTokenId: await s.grant(i, first.txHash), replaces: first.txHash }))
      expect(again).toMatchObject({ nonce: 1, repeated: false })
    })

    it('takes only a token minted to replace that very signature: a second approval of the intent on an ordinary card does not pay twice (review)', async () => {
      // The review's attack: the intent was signed and mined; approve-request asked an operator again on a card that
      // named no lost transaction, and a lying gateway spent that approval on a replacement.
      const s = setup()
      const i = s.intent({ action: actions.native('1000') })
      const first = await s.core.sign(s.params(i, { nonce: 0, approvalTokenId: await s.grant(i) }))
      s.advance(1)
      const ordinary = await s.grant(i)
      expect(await s.reason(s.core.sign(s.params(i, { nonce: 1, approvalTokenId: ordinary, replaces: first.txHash })))).toBe('invalid_approval_token')
      expect(s.events()[0]).toMatchObject({ event: 'signing_denied', data: { reason: 'invalid_approval_token', problem: 'purpose_mismatch' } })
      // Nor one minted to replace another transaction.
      const other = await s.grant(i, `0x${'cd'.repeat(32)}`)
      expect(await s.reason(s.core.sign(s.params(i, { nonce: 1, approvalTokenId: other, replaces: first.txHash })))).toBe('invalid_approval_token')
      // A token minted for a replacement pays for no first signature either.
      const j = s.intent({ action: actions.native('1000') })
      const forReplacing = await s.grant(j, `0x${'ef'.repeat(32)}`)
      expect(await s.reason(s.core.sign(s.params(j, { nonce: 2, approvalTokenId: forReplacing })))).toBe('invalid_approval_token')
      // Neither token was consumed by the refusals: the ordinary one still signs what it was given for (the stored signature).
      expect(await s.core.sign(s.params(i, { nonce: 1, approvalTokenId: ordinary }))).toEqual({ ...first, repeated: true })
      expect(s.tokens.check(ordinary, s.bindingOf(i), s.clock())).toBeNull()
    })

    it('needs an operator even when policy asks none (the signer cannot see the chain: a node or gateway that calls a mined transaction lost gets no second one alone)', async () => {
      const s = setup()
      const i = s.intent({ action: actions.transfer() })
      const first = await s.core.sign(s.params(i, { nonce: 3 }))
      expect(await s.reason(s.core.sign(s.params(i, { nonce: 4, replaces: first.txHash })))).toBe('missing_approval_token')
      expect(s.events()[0]).toMatchObject({ event: 'signing_denied', data: { reason: 'missing_approval_token', replaces: first.txHash } })
      // Nothing was replaced: the stored transaction is still the answer.
      expect(await s.core.sign(s.params(i, { nonce: 4 }))).toEqual({ ...first, repeated: true })
      s.advance(1) // the replacement's approval comes after the signature it replaces
      const approved = await s.core.sign(s.params(i, { nonce: 4, replaces: first.txHash, approvalTokenId: await s.grant(i, first.txHash) }))
      expect(approved).toMatchObject({ nonce: 4, repeated: false })
    })

    it('takes no token given before the signature it replaces: one the first signature did not need cannot pay for a second transaction', async () => {
      const s = setup()
      const i = s.intent({ action: actions.transfer() })
      // Policy allows it: the token the client sent along is neither needed nor consumed by the first signature.
      const early = await s.grant(i)
      const first = await s.core.sign(s.params(i, { nonce: 3, approvalTokenId: early }))
      s.advance(60_000)
      expect(await s.reason(s.core.sign(s.params(i, { nonce: 4, replaces: first.txHash, approvalTokenId: early })))).toBe('invalid_approval_token')
      expect(s.events()[0]).toMatchObject({ event: 'signing_denied', data: { reason: 'invalid_approval_token', problem: 'issued_before_replaced' } })
      // An approval given after it, for it, does.
      const after = await s.grant(i, first.txHash)
      expect(await s.core.sign(s.params(i, { nonce: 4, replaces: first.txHash, approvalTokenId: after }))).toMatchObject({ nonce: 4, repeated: false })
    })

    it('takes no token given before the signature it replaces even when the clock stepped back between them, nor after a restart', async () => {
      // Found by review: issued_at and created_at were wall-clock
      // milliseconds, so a clock stepped back two seconds (an NTP step) made a
      // token minted before the first signature look newer than it.
      const s = setup()
      const i = s.intent({ action: actions.transfer() })
      const early = await s.grant(i)
      s.advance(-2_000)
      const first = await s.core.sign(s.params(i, { nonce: 3 }))
      s.advance(1_000)
      expect(await s.reason(s.core.sign(s.params(i, { nonce: 4, replaces: first.txHash, approvalTokenId: early })))).toBe('invalid_approval_token')
      expect(s.events()[0]).toMatchObject({ data: { reason: 'invalid_approval_token', problem: 'issued_before_replaced' } })
      // A signer started again on the same signer.db, its clock still behind: what it mints still comes after what the file holds.
      const restarted = createSignerCore({ ...s.deps, clock: () => s.clock() - 5_000 })
      const after = (await restarted.grantApproval({ ...s.bindingOf(i), intentId: i.id, replacing: first.txHash })).approvalTokenId
      expect(await restarted.sign(s.params(i, { nonce: 4, replaces: first.txHash, approvalTokenId: after }))).toMatchObject({ nonce: 4, repeated: false })
    })

    it('each replaced signature counts against the signer’s own rate limit', async () => {
      const s = setup({ policy: { maxTxPerHour: 2 } })
      const a = s.intent()
      const first = await s.core.sign(s.params(a, { nonce: 0 }))
      s.advance(1) // the replacement's approval comes after the signature it replaces
      await s.core.sign(s.params(a, { nonce: 1, replaces: first.txHash, approvalTokenId: await s.grant(a, first.txHash) }))
      expect(await s.reason(s.core.sign(s.params(s.intent(), { nonce: 2 })))).toBe('policy_deny')
    })

    it('a replacement counts the signature it replaces: at the limit it is refused like a new intent (a lying gateway gets no extra transaction)', async () => {
      const s = setup({ policy: { maxTxPerHour: 1 } })
      const a = s.intent()
      const first = await s.core.sign(s.params(a, { nonce: 0 }))
      expect(await s.reason(s.core.sign(s.params(s.intent(), { nonce: 1 })))).toBe('policy_deny')
      expect(await s.reason(s.core.sign(s.params(a, { nonce: 1, replaces: first.txHash })))).toBe('policy_deny')
      // Asking again without `replaces` still gives the stored transaction back.
      expect(await s.core.sign(s.params(a, { nonce: 1 }))).toMatchObject({ txHash: first.txHash, nonce: 0, repeated: true })
    })
  })

  it('a signature stored without its audit event (killed between the commits) is audited late, at start or on retry', async () => {
    const s = setup()
    const i = s.intent()
    // The kill window: the signature row is committed, its audit event is not.
    s.auditLink.down = true
    await expect(s.core.sign(s.params(i))).rejects.toThrow(/simulated kill/)
    s.auditLink.down = false
    const stored = s.db.prepare('SELECT tx_hash AS txHash, audited FROM signatures WHERE intent_id = ?').get(i.id) as { txHash: string; audited: number }
    expect(stored.audited).toBe(0)
    const again = await s.core.sign(s.params(i))
    expect(again).toMatchObject({ txHash: stored.txHash, repeated: true })
    const created = s.events().filter((e) => e.event === 'signature_created')
    expect(created).toHaveLength(1)
    expect(created[0]!.data).toMatchObject({ late: true, txHash: stored.txHash })
    // At start: the same for every signature left without its event.
    const j = s.intent()
    s.auditLink.down = true
    await expect(s.core.sign(s.params(j, { nonce: 1 }))).rejects.toThrow(/simulated kill/)
    s.auditLink.down = false
    await new Promise((r) => setImmediate(r)) // i's flag, set a tick after its late event
    expect(await s.core.auditMissed()).toEqual({ late: 1, logged: 0 })
    await new Promise((r) => setImmediate(r))
    expect(await s.core.auditMissed()).toEqual({ late: 0, logged: 0 })
    expect(s.events().filter((e) => e.event === 'signature_created' && e.intentId === j.id)).toEqual([expect.objectContaining({ data: expect.objectContaining({ late: true }) })])
  })

  // Found by review: while the seal was refused, a writer of audit.db could delete or rewrite a signature's
  // row, mend the chain, and verify passed. Signing goes on (refusing it left no way back: see
  // unsealedIsWritten); verify now holds every signature signer.db keeps against the log.
  it('a signature whose row was erased before any seal covered it is handed out, and verify reports it as unaudited', async () => {
    const s = setup()
    await s.core.sign(s.params(s.intent()))
    // The attack: a row that does not hash, appended by another writer of audit.db (the triggers forbid only UPDATE and DELETE).
    const raw = new Database(path.join(s.dir, 'audit.db'))
    const { m } = raw.prepare('SELECT max(seq) AS m FROM audit_events').get() as { m: number }
    raw.prepare("INSERT INTO audit_events (seq, id, timestamp, intent_id, event, data, prev_hash, hash) VALUES (?, 'forged', ?, 'i-forged', 'approval_granted', '{}', '', '')").run(m + 1, s.clock())
    const b = s.intent()
    const signed = await s.core.sign(s.params(b, { nonce: 1 }))
    expect(s.events().filter((e) => e.event === 'signature_created' && e.intentId === b.id)).toHaveLength(1)
    // The attacker mends the chain and takes b's unsealed row with it, as the review did.
    const trigger = (raw.prepare("SELECT sql FROM sqlite_master WHERE name = 'audit_events_no_delete'").get() as { sql: string }).sql
    raw.exec(`DROP TRIGGER audit_events_no_delete; DELETE FROM audit_events WHERE seq > ${m}; ${trigger};`)
    raw.close()
    await new Promise((r) => setImmediate(r)) // b's audited flag, set a turn after its event
    expect(await s.core.sign(s.params(b, { nonce: 1 }))).toMatchObject({ txHash: signed.txHash, repeated: true })
    const verified = verifyAuditChain(path.join(s.dir, 'audit.db'), loadAuditAnchor(path.join(s.dir, 'audit-key.pub'), path.join(s.dir, 'signer.db')))
    if (verified.ok) throw new Error('verify passed a log without the signature\'s event')
    expect(verified.problems).toEqual([expect.objectContaining({ kind: 'unaudited_signature', problem: expect.stringContaining(signed.txHash) })])
  })

  it("an event for the signature written by someone else, with other data, is not taken as the signature's record: the signer writes its own", async () => {
    const s = setup()
    const i = s.intent()
    s.auditLink.down = true
    await expect(s.core.sign(s.params(i))).rejects.toThrow(/simulated kill/)
    s.auditLink.down = false
    const stored = s.db.prepare('SELECT tx_hash AS txHash, signer_address AS signer FROM signatures WHERE intent_id = ?').get(i.id) as { txHash: string; signer: string }
    // Another process on audit.db (a compromised gateway) writes the event first, naming another signer and token.
    await s.deps.audit.append({ intentId: i.id, event: 'signature_created', data: { txRequestHash: s.bindingOf(i).txRequestHash, signerAddress: `0x${'ee'.repeat(20)}`, txHash: stored.txHash, nonce: 0, tokenId: randomUUID() } })
    expect(await s.core.sign(s.params(i))).toMatchObject({ txHash: stored.txHash, repeated: true })
    const created = s.events().filter((e) => e.event === 'signature_created' && e.intentId === i.id)
    expect(created).toHaveLength(2)
    expect(created.find((e) => e.data.late === true)?.data).toMatchObject({ signerAddress: stored.signer, tokenId: null })
  })

  it('a repeat of an intent whose first signature is still being audited answers after that event, and writes none of its own', async () => {
    const s = setup()
    const i = s.intent()
    let release!: () => void
    s.auditLink.held = new Promise<void>((r) => (release = r))
    const settled: string[] = []
    // Two calls at once: the second loses the race inside the transaction.
    const first = s.core.sign(s.params(i)).then((r) => (settled.push('first'), r))
    const raced = s.core.sign(s.params(i)).then((r) => (settled.push('raced'), r))
    const stored = () => s.db.prepare('SELECT 1 FROM signatures WHERE intent_id = ?').get(i.id)
    while (!stored()) await new Promise((r) => setImmediate(r))
    // A third after the row is stored, its event still on the way.
    const retry = s.core.sign(s.params(i)).then((r) => (settled.push('retry'), r))
    for (let n = 0; n < 20; n++) await new Promise((r) => setImmediate(r))
    expect(settled).toEqual([])
    release()
    const [a, b, c] = await Promise.all([first, raced, retry])
    expect(b).toEqual({ ...a, repeated: true })
    expect(c).toEqual({ ...a, repeated: true })
    const created = s.events().filter((e) => e.event === 'signature_created')
    expect(created).toHaveLength(1)
    expect(created[0]!.data.late).toBeUndefined()
  })

  it('a kill between the audit event and its flag (set a tick later) does not write the event twice, at start or on retry', async () => {
    const s = setup()
    const i = s.intent()
    const first = await s.core.sign(s.params(i))
    await new Promise((r) => setImmediate(r))
    expect(s.db.prepare('SELECT audited FROM signatures WHERE intent_id = ?').get(i.id)).toEqual({ audited: 1 })
    // The flag's commit lost, the event's kept: what a SIGKILL in that tick leaves.
    s.db.prepare('UPDATE signatures SET audited = 0 WHERE intent_id = ?').run(i.id)
    expect(await s.core.auditMissed()).toEqual({ late: 0, logged: 1 })
    await new Promise((r) => setImmediate(r))
    expect(s.db.prepare('SELECT audited FROM signatures WHERE intent_id = ?').get(i.id)).toEqual({ audited: 1 })
    s.db.prepare('UPDATE signatures SET audited = 0 WHERE intent_id = ?').run(i.id)
    expect(await s.core.sign(s.params(i))).toEqual({ ...first, repeated: true })
    const created = s.events().filter((e) => e.event === 'signature_created')
    expect(created).toHaveLength(1)
    expect(created[0]!.data).toMatchObject({ txHash: first.txHash })
    expect(created[0]!.data.late).toBeUndefined()
    // At start, both kinds at once: one walk of the log finds i's event, j gets its late one.
    const j = s.intent()
    s.auditLink.down = true
    await expect(s.core.sign(s.params(j, { nonce: 1 }))).rejects.toThrow(/simulated kill/)
    s.auditLink.down = false
    s.db.prepare('UPDATE signatures SET audited = 0 WHERE intent_id = ?').run(i.id)
    expect(await s.core.auditMissed()).toEqual({ late: 1, logged: 1 })
    const byIntent = s.events().filter((e) => e.event === 'signature_created').map((e) => [e.intentId, e.data.late ?? false])
    expect(byIntent.sort()).toEqual([[i.id, false], [j.id, true]].sort())
  })

  it("a replacement stored while the first signature's flag is on its way keeps its own flag unset: killed before its event, it is audited late at start", async () => {
    const s = setup()
    const i = s.intent({ action: actions.transfer() }) // allowed by policy: the first signature takes no token
    // The first signature's event is slow to commit; its flag is set a tick after it.
    let release!: () => void
    s.auditLink.held = new Promise<void>((r) => (release = r))
    const first = s.core.sign(s.params(i, { nonce: 0 }))
    while (!s.signatures.byIntent(i.id)) await new Promise((r) => setImmediate(r))
    const s1 = s.signatures.byIntent(i.id)!
    // Meanwhile a replacement is stored, and the process dies before its event commits.
    s.advance(1) // the replacement's approval comes after the signature it replaces
    const token = await s.grant(i, s1.txHash as Hex)
    s.auditLink.down = true
    await expect(s.core.sign(s.params(i, { nonce: 1, replaces: s1.txHash as Hex, approvalTokenId: token }))).rejects.toThrow(/simulated kill/)
    const r = s.signatures.byIntent(i.id)!
    expect(r).toMatchObject({ nonce: 1, replacesTxHash: s1.txHash })
    // The first signature's event commits (it was past the kill point); its flag, a tick later, is its own.
    s.auditLink.down = false
    release()
    expect(await first).toMatchObject({ txHash: s1.txHash, repeated: false })
    for (let n = 0; n < 5; n++) await new Promise((r) => setImmediate(r))
    expect(s.db.prepare('SELECT tx_hash AS txHash, audited FROM signatures WHERE intent_id = ?').get(i.id)).toEqual({ txHash: r.txHash, audited: 0 })
    expect(s.signatures.isAudited(i.id, r.txHash)).toBe(false)
    expect(s.signatures.isAudited(i.id, s1.txHash)).toBe(false) // no longer the stored one
    // Restart: the replacement is found without its event and gets it, late.
    const restarted = createSignerCore(s.deps)
    expect(await restarted.auditMissed()).toEqual({ late: 1, logged: 0 })
    const logged = () => s.events().filter((e) => e.event.startsWith('signature_')).map((e) => [e.event, e.data.txHash, e.data.late ?? false])
    expect(logged().sort()).toEqual([['signature_created', s1.txHash, false], ['signature_replaced', r.txHash, true]].sort())
    expect(s.events().find((e) => e.event === 'signature_replaced')).toMatchObject({ intentId: i.id, data: { nonce: 1, replacedTxHash: s1.txHash, replacedNonce: 0, late: true } })
    // Its flag is set now: a retry gets the replacement back and nothing is written twice, nor at the next start.
    await new Promise((r) => setImmediate(r))
    expect(s.signatures.isAudited(i.id, r.txHash)).toBe(true)
    expect(await restarted.sign(s.params(i, { nonce: 1 }))).toMatchObject({ txHash: r.txHash, nonce: 1, repeated: true })
    expect(await createSignerCore(s.deps).auditMissed()).toEqual({ late: 0, logged: 0 })
    expect(logged()).toHaveLength(2)
  })

  it('refuses a transaction that differs from the one the intent builds (a compromised gateway)', async () => {
    const s = setup()
    const i = s.intent({ action: actions.transfer() })
    const forged = { ...buildTransaction(i, routers).txRequest, to: '0x000000000000000000000000000000000000dEaD' as Hex }
    expect(await s.reason(s.core.sign(s.params(i, { txRequest: forged })))).toBe('tx_mismatch')
    const moreValue = { ...buildTransaction(s.intent({ action: actions.native('1') }), routers).txRequest, value: '2' }
    expect(await s.reason(s.core.sign(s.params(s.intent({ action: actions.native('1') }), { txRequest: moreValue })))).toBe('tx_mismatch')
    expect(s.events()[0]).toMatchObject({ event: 'signing_denied', data: { reason: 'tx_mismatch' } })
  })

  it('an aggregator swap: signs calldata that matches the intent, refuses calldata that does not', async () => {
    const s = setup()
    const i = s.intent({ action: { ...actions.swapIn(), provider: 'aggregator', router: AGGREGATOR_ROUTER } as never })
    const tx = (data: Hex) => ({ to: AGGREGATOR_ROUTER, data, value: '0', chainId: 8453, type: 'eip1559' as const })
    const stolen = aggregatorSwapCalldata({ receiver: '0x000000000000000000000000000000000000dEaD', amount: 1_000_000n, minReturn: 5n })
    expect(await s.reason(s.core.sign(s.params(i, { txRequest: tx(stolen) })))).toBe('tx_mismatch')
    expect(s.events()[0]!.data.error).toMatch(/proceeds go to/)
    const good = aggregatorSwapCalldata({ receiver: account.address, amount: 1_000_000n, minReturn: 5n })
    expect(await s.reason(s.core.sign(s.params(i, { txRequest: tx(good) })))).toBe('signed')
  })

  it('an aggregator swap whose intent names another router, or sells a token for itself, is refused whatever the calldata (a compromised gateway)', async () => {
    const s = setup()
    const tx = (data: Hex) => ({ to: AGGREGATOR_ROUTER, data, value: '0', chainId: 8453, type: 'eip1559' as const })
    const good = aggregatorSwapCalldata({ receiver: account.address, amount: 1_000_000n, minReturn: 5n })
    // The gateway's own build of these intents would refuse them: the parameters come from a valid one.
    const valid = s.intent({ action: { ...actions.swapIn(), provider: 'aggregator', router: AGGREGATOR_ROUTER } as never })
    const forged = (i: TxIntent, data: Hex) => ({ ...s.params(valid), intent: i, txRequest: tx(data) })
    // The card shows the intent's router: 0x…dEaD there while the transaction goes to the aggregator router.
    const dead = s.intent({ action: { ...actions.swapIn(), provider: 'aggregator', router: '0x000000000000000000000000000000000000dEaD' } as never })
    expect(await s.reason(s.core.sign(forged(dead, good)))).toBe('tx_mismatch')
    expect(s.events()[0]!.data.error).toMatch(/router 0x000000000000000000000000000000000000dEaD is not a router of chain 8453/)
    const same = s.intent({ action: { ...actions.swapIn(), provider: 'aggregator', router: AGGREGATOR_ROUTER, assetOut: actions.swapIn().assetIn } as never })
    const sameData = aggregatorSwapCalldata({ receiver: account.address, dst: actions.swapIn().assetIn.address, amount: 1_000_000n, minReturn: 5n })
    expect(await s.reason(s.core.sign(forged(same, sameData)))).toBe('tx_mismatch')
    expect(s.events()[0]!.data.error).toMatch(/must be different tokens/)
  })

  it('addresses in upper case only (valid EIP-55, refused by viem) from a compromised gateway: signed as the checksummed form or refused and audited, never an internal error', async () => {
    // Found by review: the signer took them as they came and viem threw inside
    // the signature, a JSON-RPC internal error with nothing in the audit log.
    const s = setup({ policy: { requireApprovalAbove: { valueWei: '10000000000000000000' } } })
    const upper = (a: string) => `0x${a.slice(2).toUpperCase()}` as Hex
    const recipient = '0x2222222222222222222222222222222222222abc'
    const native = s.intent({ action: { type: 'transfer_native', to: upper(recipient), amount: '1000' } })
    const nativeTx = { to: upper(recipient), data: '0x' as Hex, value: '1000', chainId: 8453, type: 'eip1559' as const }
    const signed = await s.core.sign(s.params(native, { txRequest: nativeTx }))
    expect(parseTransaction(signed.signedTx).to?.toLowerCase()).toBe(recipient)

    const swap = actions.swapIn()
    const upperToken = s.intent({ action: { ...swap, assetOut: { ...swap.assetOut, address: upper('0x4200000000000000000000000000000000000abc') } } })
    expect(await s.reason(s.core.sign(s.params(upperToken, { txRequest: { to: swap.router, data: '0x', value: '0', chainId: 8453, type: 'eip1559' } })))).toBe('tx_mismatch')
    expect(await s.reason(s.core.sign(s.params(upperToken)))).toBe('signed')

    const aggregatorIntent = s.intent({ action: { ...actions.swapIn(), provider: 'aggregator', router: AGGREGATOR_ROUTER } as never })
    const good = aggregatorSwapCalldata({ receiver: account.address, amount: 1_000_000n, minReturn: 5n })
    const viaUpperRouter = { to: upper(AGGREGATOR_ROUTER), data: good, value: '0', chainId: 8453, type: 'eip1559' as const }
    const viaAggregator = await s.core.sign(s.params(aggregatorIntent, { txRequest: viaUpperRouter }))
    expect(parseTransaction(viaAggregator.signedTx).to?.toLowerCase()).toBe(AGGREGATOR_ROUTER.toLowerCase())

    // Three signatures and one refusal, each audited (a signature's row is written once its commit is durable, so in any order).
    expect(s.events().map((e) => `${e.event} ${String(e.data.reason ?? '')}`).sort()).toEqual([
      'signature_created ',
      'signature_created ',
      'signature_created ',
      'signing_denied tx_mismatch',
    ])
  })

  it('a wallet with no key here is refused before policy, so no per-wallet counter is loaded and kept for it', async () => {
    // Found by review: sign calls naming random wallets each loaded a rate
    // window (a signer.db query) kept for the life of the process.
    const s = setup({ keys: false })
    const counted = vi.spyOn(s.signatures, 'recentCount')
    for (let n = 0; n < 20; n++) {
      const stranger = `0x${randomUUID().replaceAll('-', '').padEnd(40, '0')}` as Hex
      const i = makeIntent({ wallet: stranger, nowMs: s.clock(), action: actions.native('1000') })
      expect(await s.reason(s.core.sign(s.params(i)))).toBe('key_locked')
    }
    expect(counted).not.toHaveBeenCalled()
  })

  it('applies its own policy: deny and the per-wallet counter', async () => {
    const denyAll = setup({ policy: { allowedChains: [1] } })
    expect(await denyAll.reason(denyAll.core.sign(denyAll.params(denyAll.intent())))).toBe('policy_deny')
    const limited = setup({ policy: { maxTxPerHour: 2 } })
    for (let n = 0; n < 2; n++) expect(await limited.reason(limited.core.sign(limited.params(limited.intent(), { nonce: n })))).toBe('signed')
    expect(await limited.reason(limited.core.sign(limited.params(limited.intent(), { nonce: 2 })))).toBe('policy_deny')
    limited.advance(3_600_001)
    expect(await limited.reason(limited.core.sign(limited.params(limited.intent(), { nonce: 2 })))).toBe('signed')
  })

  it('its own policy copy: a swap under recipientAllowlist into a token not in tokenAllowlist needs a token', async () => {
    const s = setup({ policy: { recipientAllowlist: ['0x000000000000000000000000000000000000b0b0'] } })
    const i = s.intent({ action: actions.swapIn() })
    expect(await s.reason(s.core.sign(s.params(i)))).toBe('missing_approval_token')
    const token = await s.grant(i)
    expect(await s.reason(s.core.sign(s.params(i, { approvalTokenId: token })))).toBe('signed')
  })

  describe('approval tokens', () => {
    it('required by policy: missing → missing_approval_token; valid → signed and consumed; replay → invalid', async () => {
      const s = setup()
      const i = s.intent({ action: actions.native('1000') })
      expect(await s.reason(s.core.sign(s.params(i)))).toBe('missing_approval_token')
      const token = await s.grant(i)
      expect(await s.reason(s.core.sign(s.params(i, { approvalTokenId: token })))).toBe('signed')
      const other = { ...i, id: randomUUID() }
      expect(await s.reason(s.core.sign(s.params(other, { approvalTokenId: token })))).toBe('invalid_approval_token')
      expect(s.tokens.check(token, s.bindingOf(i), s.clock())).toBe('consumed')
    })

    it('expires after 300 s (injected clock) and is swept', async () => {
      const s = setup()
      const i = s.intent({ action: actions.native('1000'), deadline: Math.floor(s.clock() / 1000) + 3600 })
      const token = await s.grant(i)
      s.advance(299_999)
      expect(s.tokens.check(token, s.bindingOf(i), s.clock())).toBeNull()
      s.advance(1)
      expect(await s.reason(s.core.sign(s.params(i, { approvalTokenId: token })))).toBe('invalid_approval_token')
      expect(s.events()[0]!.data).toMatchObject({ reason: 'invalid_approval_token', problem: 'expired' })
      expect(s.tokens.sweep(s.clock())).toBe(1)
      expect(s.tokens.check(token, s.bindingOf(i), s.clock())).toBe('unknown')
    })

    it('is bound to its txRequestHash', async () => {
      const s = setup()
      const a = s.intent({ action: actions.native('1000') })
      const b = s.intent({ action: actions.native('1001') })
      const token = await s.grant(a)
      expect(await s.reason(s.core.sign(s.params(b, { approvalTokenId: token })))).toBe('invalid_approval_token')
      expect(s.events()[0]!.data).toMatchObject({ problem: 'hash_mismatch' })
    })

    it('is not consumed when signing fails before the signature (key locked, gas cap)', async () => {
      const locked = setup({ keys: false })
      const i = locked.intent({ action: actions.native('1000') })
      const token = await locked.grant(i)
      expect(await locked.reason(locked.core.sign(locked.params(i, { approvalTokenId: token })))).toBe('key_locked')
      expect(locked.tokens.check(token, locked.bindingOf(i), locked.clock())).toBeNull()

      const s = setup()
      const j = s.intent({ action: actions.native('1000'), maxGasWei: '1000' })
      const t = await s.grant(j)
      expect(await s.reason(s.core.sign(s.params(j, { approvalTokenId: t })))).toBe('gas_cost_exceeds_max')
      expect(s.tokens.check(t, s.bindingOf(j), s.clock())).toBeNull()
    })

    it('is bound to the exact intent: a stolen token id with another intent for the same transaction is refused and stays valid', async () => {
      const s = setup()
      const victim = s.intent({ action: actions.native('1000') })
      const token = await s.grant(victim)
      // Same action, so the same txRequestHash; only the intent around it differs.
      const thief = { ...victim, id: randomUUID(), constraints: { ...victim.constraints, maxGasWei: (BigInt(victim.constraints.maxGasWei) * 900n).toString() }, preferences: { speed: 'fast' as const } }
      expect(buildTransaction(thief, routers).txRequestHash).toBe(buildTransaction(victim, routers).txRequestHash)
      expect(await s.reason(s.core.sign(s.params(thief, { approvalTokenId: token })))).toBe('invalid_approval_token')
      expect(s.events()[0]!.data).toMatchObject({ reason: 'invalid_approval_token', problem: 'intent_mismatch' })
      // Same id, one field changed: still another intent.
      const edited = { ...victim, metadata: { note: 'edited' } }
      expect(await s.reason(s.core.sign(s.params(edited, { approvalTokenId: token })))).toBe('invalid_approval_token')
      expect(s.tokens.check(token, s.bindingOf(victim), s.clock())).toBeNull()
      expect(await s.reason(s.core.sign(s.params(victim, { approvalTokenId: token })))).toBe('signed')
    })

    it('20 concurrent signs on one token: only the approved intent signs, once; its repeats get the same transaction', async () => {
      const s = setup()
      const template = s.intent({ action: actions.native('5000') })
      const token = await s.grant(template)
      const calls = Array.from({ length: 20 }, (_, n) => (n % 2 === 0 ? template : { ...template, id: randomUUID() }))
      const results = await Promise.all(calls.map((i, n) => s.core.sign(s.params(i, { approvalTokenId: token, nonce: n })).then((r) => r.txHash, (e: RpcError) => (e.data as { reason: string }).reason)))
      const hashes = results.filter((r) => r.startsWith('0x'))
      expect(hashes).toHaveLength(10)
      expect(new Set(hashes).size).toBe(1)
      expect(results.filter((r) => r === 'invalid_approval_token')).toHaveLength(10)
      expect(s.events().filter((e) => e.event === 'signature_created')).toHaveLength(1)
    })
  })

  it('signatures that finish in the same turn are stored in one signer.db transaction, and share one fsync', async () => {
    const s = setup()
    const intents = Array.from({ length: 5 }, () => s.intent({ action: actions.transfer() }))
    const before = s.core.durability()
    const results = await Promise.all(intents.map((i, n) => s.core.sign(s.params(i, { nonce: n }))))
    expect(new Set(results.map((r) => r.txHash)).size).toBe(5)
    await new Promise((r) => setTimeout(r, 20)) // the audited flags' turn
    const after = s.core.durability()
    // One transaction for the five signatures, one for their audited flags (one each would be ten).
    expect(after.storeTransactions.transactions - before.storeTransactions.transactions).toBe(2)
    expect(after.storeTransactions.jobs - before.storeTransactions.jobs).toBe(6)
    expect(after.signerDb.syncs - before.signerDb.syncs).toBe(1)
    expect(s.events().filter((e) => e.event === 'signature_created')).toHaveLength(5)
  })

  it('grantApproval answers once the token is committed, its fsync started; grantsDurable answers after that same fsync', async () => {
    const s = setup()
    const i = s.intent({ action: actions.native('1000') })
    const { approvalTokenId } = await s.core.grantApproval({ ...s.bindingOf(i), intentId: i.id })
    expect(s.tokens.check(approvalTokenId, s.bindingOf(i), s.clock())).toBeNull()
    expect(s.core.durability().signerDb).toMatchObject({ commits: 1, syncs: 0 })
    await expect(s.core.grantsDurable()).resolves.toEqual({})
    // One fsync: the one the mint started covers the wait.
    expect(s.core.durability().signerDb).toMatchObject({ commits: 1, syncs: 1 })
    await expect(s.core.grantsDurable()).resolves.toEqual({})
    expect(s.core.durability().signerDb.syncs).toBe(1)
  })

  it('approvalRequired from the gateway makes a token required and consumed even when the signer policy allows', async () => {
    const s = setup()
    const i = s.intent({ action: actions.transfer() })
    expect(await s.reason(s.core.sign(s.params(i, { approvalRequired: true })))).toBe('missing_approval_token')
    expect(await s.reason(s.core.sign(s.params(i, { approvalRequired: true, approvalTokenId: randomUUID() })))).toBe('invalid_approval_token')
    const token = await s.grant(i)
    const signed = await s.core.sign(s.params(i, { approvalRequired: true, approvalTokenId: token }))
    expect(signed.repeated).toBe(false)
    expect(s.events().find((e) => e.event === 'signature_created')?.data).toMatchObject({ tokenId: token })
    // Consumed: another intent with the same content cannot use it.
    const twin = { ...i, id: randomUUID() }
    expect(await s.reason(s.core.sign(s.params(twin, { approvalRequired: true, approvalTokenId: token })))).toBe('invalid_approval_token')
  })

  it("a dev key signs only for the signer's own dev chain; nothing in the request can change that", async () => {
    const onBase = setup({ dev: true, devChainId: 8453 })
    expect(await onBase.reason(onBase.core.sign(onBase.params(onBase.intent({ chainId: 1 }))))).toBe('dev_key_on_remote_chain')
    const refused = onBase.events().find((e) => e.event === 'signing_denied')
    expect(refused?.data).toMatchObject({ reason: 'dev_key_on_remote_chain', chainId: 1, devChainId: 8453 })
    // The old gateway flag is no part of the protocol any more.
    expect(await onBase.reason(onBase.core.sign({ ...onBase.params(onBase.intent({ chainId: 1 })), localChain: true } as never))).toBe('dev_key_on_remote_chain')
    expect(await onBase.reason(onBase.core.sign(onBase.params(onBase.intent({ chainId: 8453 }))))).toBe('signed')
    // No dev chain configured: a dev key signs nothing.
    const none = setup({ dev: true })
    expect(await none.reason(none.core.sign(none.params(none.intent({ chainId: 8453 }))))).toBe('dev_key_on_remote_chain')
    // A key that is not dev is not affected.
    const real = setup({ devChainId: 8453 })
    expect(await real.reason(real.core.sign(real.params(real.intent({ chainId: 1 }))))).toBe('signed')
  })

  it('refuses a deadline that has passed', async () => {
    const s = setup()
    const i = s.intent({ deadline: Math.floor(s.clock() / 1000) + 10 })
    s.advance(10_000)
    expect(await s.reason(s.core.sign(s.params(i)))).toBe('policy_deny')
  })

  it('lists its accounts without key material, each with its backend', () => {
    const s = setup()
    expect(s.core.accounts()).toEqual([{ address: account.address, label: null, dev: false, unlocked: true, backend: 'keystore' }])
    expect(JSON.stringify(s.core.accounts())).not.toContain(KEY.slice(2, 20))
    const onToken: RingKey = { address: account.address, label: 'vault', dev: false, backend: 'pkcs11', signDigest: async () => ({ r: '0x1', s: '0x1', yParity: 0 }) }
    expect(setup({ ringKey: onToken }).core.accounts()).toEqual([{ address: account.address, label: 'vault', dev: false, unlocked: true, backend: 'pkcs11' }])
  })
})
