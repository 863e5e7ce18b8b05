import { generateKeyPairSync, randomUUID } from 'node:crypto'
import { mkdtempSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { canonicalize } from '../../canonical/jcs.js'
import { openAuditLog, type AuditLog } from '../../audit/auditLog.js'
import { auditKeyFingerprint, CHECKPOINT_EVENT, signCheckpoint, SIGNER_CHECKPOINT_TABLE, type LatestCheckpoint } from '../../audit/checkpoint.js'
import { createBatchWriter, openAuditDb } from '../../audit/writer.js'
import { rewriteAuditRow, tamperAudit } from '../testing/auditTamper.js'
import { loadAuditAnchor } from './anchor.js'
import { runAuditCli } from './cli.js'
import { createSignatureCheck, readSignerSignatures } from './signatureCheck.js'
import { readNewestSeq, verifyAuditChain } from './verify.js'

let log: AuditLog | undefined
const openSignerDbs: Database.Database[] = []
afterEach(async () => {
  await log?.close()
  log = undefined
  for (const db of openSignerDbs.splice(0)) db.close()
})

/**
 * signer.db's tables as the signer creates them (services/signer/src/store/signerDb.ts,
 * which shared cannot import): verify reads them with plain SQL.
 */
const SIGNER_DB_TABLES = `
  CREATE TABLE signatures (
    intent_id        TEXT PRIMARY KEY,
    tx_request_hash  TEXT    NOT NULL,
    signer_address   TEXT    NOT NULL,
    chain_id         INTEGER NOT NULL,
    nonce            INTEGER NOT NULL,
    signed_tx        TEXT    NOT NULL,
    tx_hash          TEXT    NOT NULL,
    token_id         TEXT,
    created_at       INTEGER NOT NULL,
    audited          INTEGER NOT NULL DEFAULT 0,
    replaces_tx_hash TEXT
  );
  CREATE INDEX signatures_by_wallet ON signatures (signer_address, created_at);
  CREATE TABLE replaced_signatures (
    tx_hash          TEXT PRIMARY KEY,
    intent_id        TEXT    NOT NULL,
    signer_address   TEXT    NOT NULL,
    chain_id         INTEGER NOT NULL,
    nonce            INTEGER NOT NULL,
    signed_tx        TEXT    NOT NULL,
    token_id         TEXT,
    created_at       INTEGER NOT NULL,
    replaced_at      INTEGER NOT NULL,
    replaced_by      TEXT    NOT NULL
  );
  CREATE INDEX replaced_signatures_by_wallet ON replaced_signatures (signer_address, replaced_at);
  CREATE TABLE ${SIGNER_CHECKPOINT_TABLE} (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    seq         INTEGER NOT NULL,
    hash        TEXT    NOT NULL,
    head_seq    INTEGER NOT NULL,
    head_hash   TEXT    NOT NULL,
    written_at  INTEGER NOT NULL
  );`

const WALLET = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8'
const WALLET_CHECKSUMMED = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8'
const ATTACKER = '0x1111111111111111111111111111111111111111'
/** What a signed transaction's bytes look like in signer.db: verify must never print them. */
const SIGNED_TX_MARK = 'f86b80signedtxbytes'

interface Sig {
  intentId: string
  txRequestHash: string
  signerAddress: string
  nonce: number
  txHash: string
  tokenId: string | null
  signedTx: string
}

let counter = 0
const hex32 = (tag: string) => `0x${Buffer.from(`${tag}-${++counter}`).toString('hex').padEnd(64, '0').slice(0, 64)}`

function newSig(over: Partial<Sig> = {}): Sig {
  const intentId = over.intentId ?? randomUUID()
  return { intentId, txRequestHash: hex32('req'), signerAddress: WALLET, nonce: counter, txHash: hex32('tx'), tokenId: randomUUID(), signedTx: `0x02${SIGNED_TX_MARK}${counter}`, ...over }
}

/** A signature's event data, as appendSignatureEvent (services/signer/src/signing/signerCore.ts) writes it. */
function eventData(s: Sig, late = false): Record<string, unknown> {
  return { txRequestHash: s.txRequestHash, signerAddress: s.signerAddress, txHash: s.txHash, nonce: s.nonce, tokenId: s.tokenId, ...(late ? { late: true } : {}) }
}

/**
 * The signer's side of the log: audit.db with signed checkpoints, and
 * signer.db with its signatures, written as the signer writes them, then the
 * key and the latest checkpoint where verify reads them.
 */
function signerStack() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cs-verify-sigs-'))
  const file = path.join(dir, 'audit.db')
  const signerDbFile = path.join(dir, 'signer.db')
  const keyFile = path.join(dir, 'audit-key.pub')
  const { privateKey, publicKey } = generateKeyPairSync('ed25519')
  let latest: LatestCheckpoint | null = null
  /** The signer starts: its audit log, with checkpoints. */
  const start = () => {
    log = openAuditLog(file, {
      checkpoints: {
        sign: (head) => ({ key: auditKeyFingerprint(publicKey), signature: signCheckpoint(privateKey, head.seq, head.hash) }),
        written: (cp) => {
          latest = { seq: cp.seq, hash: cp.hash }
        },
        anchor: () => latest,
      },
    })
  }
  start()
  writeFileSync(keyFile, publicKey.export({ type: 'spki', format: 'pem' }) as string)
  const sdb = new Database(signerDbFile)
  openSignerDbs.push(sdb)
  sdb.exec(SIGNER_DB_TABLES)
  const insert = sdb.prepare(
    `INSERT INTO signatures (intent_id, tx_request_hash, signer_address, chain_id, nonce, signed_tx, tx_hash, token_id, created_at, audited)
     VALUES (?, ?, ?, 31337, ?, ?, ?, ?, ?, ?)`,
  )

  /** Stores a signature and appends its event; `seal: false` is the window before a checkpoint seals it. */
  async function sign(s: Sig, opts: { seal?: boolean; audited?: boolean; event?: Record<string, unknown> | null } = {}): Promise<void> {
    insert.run(s.intentId, s.txRequestHash, s.signerAddress.toLowerCase(), s.nonce, s.signedTx, s.txHash, s.tokenId, Date.now(), opts.audited === false ? 0 : 1)
    if (opts.event === null) return // the process died between the two commits
    await log!.append({ intentId: s.intentId, event: 'signature_created', data: opts.event ?? eventData(s) }, { checkpoint: opts.seal ?? true })
  }

  /** Replaces the intent's signature `old` by `s` as Signatures.replace does, and appends signature_replaced. */
  async function replace(old: Sig, s: Sig, opts: { seal?: boolean } = {}): Promise<void> {
    sdb.transaction(() => {
      sdb
        .prepare(
          `INSERT INTO replaced_signatures (tx_hash, intent_id, signer_address, chain_id, nonce, signed_tx, token_id, created_at, replaced_at, replaced_by)
           VALUES (?, ?, ?, 31337, ?, ?, ?, 0, ?, ?)`,
        )
        .run(old.txHash, old.intentId, old.signerAddress.toLowerCase(), old.nonce, old.signedTx, old.tokenId, Date.now(), s.txHash)
      const changed = sdb
        .prepare('UPDATE signatures SET signer_address = ?, nonce = ?, signed_tx = ?, tx_hash = ?, token_id = ?, replaces_tx_hash = ?, audited = 1 WHERE intent_id = ? AND tx_hash = ?')
        .run(s.signerAddress.toLowerCase(), s.nonce, s.signedTx, s.txHash, s.tokenId, old.txHash, s.intentId, old.txHash).changes
      expect(changed).toBe(1)
    })()
    await log!.append(
      { intentId: s.intentId, event: 'signature_replaced', data: { ...eventData(s), replacedTxHash: old.txHash, replacedNonce: old.nonce } },
      { checkpoint: opts.seal ?? true },
    )
  }

  /** The signer stops: the log closed, its latest checkpoint in signer.db. */
  async function stop(): Promise<void> {
    await log!.close()
    log = undefined
    if (latest) sdb.prepare(`INSERT OR REPLACE INTO ${SIGNER_CHECKPOINT_TABLE} VALUES (1, ?, ?, 0, '', 0)`).run(latest.seq, latest.hash)
  }

  /** What the signer does at start for a signature stored without its event (auditMissed): the event, marked late, sealed; then the flag. */
  async function auditLate(s: Sig): Promise<void> {
    await log!.append({ intentId: s.intentId, event: 'signature_created', data: eventData(s, true) }, { checkpoint: true })
    sdb.prepare('UPDATE signatures SET audited = 1 WHERE intent_id = ? AND tx_hash = ?').run(s.intentId, s.txHash)
  }

  const verify = () => verifyAuditChain(file, loadAuditAnchor(keyFile, signerDbFile))
  const cli = () => {
    const lines: string[] = []
    const code = runAuditCli(['verify', '--db', file, '--audit-key', keyFile, '--signer-db', signerDbFile], { out: (l) => lines.push(l), err: (l) => lines.push(l), env: {} })
    return { code, lines }
  }
  return { dir, file, signerDbFile, keyFile, fingerprint: auditKeyFingerprint(publicKey), sign, replace, auditLate, start, stop, verify, cli, signerDb: sdb }
}

/** The seq of the intent's `event` row. */
function seqOf(file: string, intentId: string, event = 'signature_created'): number {
  const db = new Database(file, { readonly: true })
  try {
    return db.prepare<[string, string], number>('SELECT seq FROM audit_events WHERE intent_id = ? AND event = ?').pluck().get(intentId, event)!
  } finally {
    db.close()
  }
}

async function decisions(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await log!.append({ intentId: randomUUID(), event: 'policy_evaluated', data: { allowed: true, n: i } })
}

describe("verify cross-checks the log with signer.db's signatures", () => {
  it('a clean log and a signer.db with signatures (first ones, replaced ones, a late event, an address in another case) verify; the OK line counts them', async () => {
    const s = signerStack()
    await decisions(2)
    const a = newSig()
    await s.sign(a)
    // An approval-free signature (tokenId null), whose event names the wallet checksummed: the same address.
    const b = newSig({ tokenId: null })
    await s.sign(b, { event: { ...eventData(b), signerAddress: WALLET_CHECKSUMMED } })
    // Stored, then a crash before its event: the signer writes it at its next start, marked late.
    const c = newSig()
    await s.sign(c, { audited: false, event: null })
    await decisions(1)
    await s.auditLate(c)
    // One intent signed, replaced, and replaced again.
    const d1 = newSig()
    const d2 = newSig({ intentId: d1.intentId, txRequestHash: d1.txRequestHash })
    const d3 = newSig({ intentId: d1.intentId, txRequestHash: d1.txRequestHash, tokenId: null })
    await s.sign(d1)
    await s.replace(d1, d2)
    await decisions(1)
    await s.replace(d2, d3)
    await s.stop()
    expect(s.verify()).toMatchObject({ ok: true })
    const r = s.cli()
    expect(r.code).toBe(0)
    expect(r.lines).toEqual([expect.stringMatching(new RegExp(`^audit chain OK: \\d+ events, \\d+ signed checkpoints .*; checked with audit key ${s.fingerprint} \\(.*\\) and the latest checkpoint and 6 signatures in ${escapeRegExp(s.signerDbFile)}$`))])
  })

  it('a signer.db with an empty signatures table, or none (older or fresh), finds nothing; the OK line says what was checked', async () => {
    const s = signerStack()
    await decisions(3)
    await log!.checkpoint()
    await s.stop()
    expect(s.verify()).toMatchObject({ ok: true })
    expect(s.cli()).toEqual({ code: 0, lines: [expect.stringMatching(/ and the latest checkpoint and 0 signatures in /)] })
    s.signerDb.exec('DROP TABLE signatures; DROP TABLE replaced_signatures')
    expect(s.verify()).toMatchObject({ ok: true })
    expect(s.cli()).toEqual({ code: 0, lines: [expect.stringMatching(/ and the latest checkpoint in /)] })
  })

  it("the review's attack: a signature's signature_created row deleted before the signer sealed it (triggers dropped and put back), then sealed, is an unaudited signature (exit 1)", async () => {
    const s = signerStack()
    const a = newSig()
    await s.sign(a)
    await decisions(2)
    const b = newSig()
    // The window: b's event committed, no checkpoint over it yet (before the fix, a separate transaction).
    await s.sign(b, { seal: false })
    const seq = seqOf(s.file, b.intentId)
    // An attacker with write access to audit.db: drop the no-delete trigger, delete the row, put the trigger back exactly.
    tamperAudit(s.file, (db) => db.prepare('DELETE FROM audit_events WHERE seq = ?').run(seq))
    // The signer's next checkpoint seals the log as it now is: the hash chain and every checkpoint are sound.
    await log!.checkpoint()
    await s.sign(newSig())
    await s.stop()
    expect(verifyAuditChain(s.file)).toMatchObject({ ok: true })
    expect(s.verify()).toEqual({
      ok: false,
      rows: expect.any(Number),
      checkpoints: 3,
      lastCheckpointSeq: expect.any(Number),
      reanchors: [],
      problemCount: 1,
      kinds: { unaudited_signature: 1 },
      problems: [
        {
          seq: null,
          kind: 'unaudited_signature',
          problem: `signer.db holds signature ${b.txHash} of intent ${b.intentId} and marks it audited (the signer saw its event committed), but the log has no signature_created event for it: rows were deleted from the log or the event was rewritten`,
        },
      ],
    })
    const r = s.cli()
    expect(r.code).toBe(1)
    expect(r.lines).toEqual([
      `audit chain BROKEN (unaudited signature): signer.db holds signature ${b.txHash} of intent ${b.intentId} and marks it audited (the signer saw its event committed), but the log has no signature_created event for it: rows were deleted from the log or the event was rewritten`,
      expect.stringMatching(/^audit chain BROKEN: 1 problem in \d+ events$/),
    ])
    expect(r.lines.join('\n')).not.toContain(SIGNED_TX_MARK)
  })

  // Found by review: only each kept signature's event was looked for, so events added by another writer of audit.db
  // (the gateway is in the audit group) passed once the signer's next checkpoint sealed them.
  it('signature events signer.db does not keep (a second payment of a signed intent, a signature of a denied one), sealed by the next checkpoint, are unknown signatures (exit 1)', async () => {
    const s = signerStack()
    const a = newSig()
    await s.sign(a)
    const twice = newSig({ intentId: a.intentId, txRequestHash: a.txRequestHash })
    await log!.append({ intentId: a.intentId, event: 'signature_replaced', data: { ...eventData(twice), replacedTxHash: a.txHash, replacedNonce: a.nonce } })
    const denied = newSig()
    await log!.append({ intentId: denied.intentId, event: 'signature_created', data: eventData(denied) })
    await log!.append({ intentId: randomUUID(), event: 'signature_created', data: { nonce: 1 } })
    await log!.checkpoint()
    await s.stop()
    expect(verifyAuditChain(s.file)).toMatchObject({ ok: true })
    const result = s.verify()
    expect(result).toMatchObject({ ok: false, problemCount: 3, kinds: { unknown_signature: 3 } })
    expect(result.ok ? [] : result.problems).toEqual([
      {
        seq: seqOf(s.file, a.intentId, 'signature_replaced'),
        kind: 'unknown_signature',
        problem: `this signature_replaced event is for signature ${twice.txHash} of intent ${a.intentId}, which signer.db does not keep: it was written by another process than the signer, or signer.db lost that signature (it was restored from an older copy, or a power cut came before its write reached the disk; the signer then never handed that transaction out)`,
      },
      { seq: seqOf(s.file, denied.intentId), kind: 'unknown_signature', problem: expect.stringMatching(new RegExp(`^this signature_created event is for signature ${denied.txHash} of intent ${denied.intentId}, which signer.db does not keep`)) },
      { seq: expect.any(Number), kind: 'unknown_signature', problem: expect.stringMatching(/^this signature_created event names no txHash \(intent [0-9a-f-]+\), which signer.db does not keep/) },
    ])
    const r = s.cli()
    expect(r.code).toBe(1)
    expect(r.lines[0]).toMatch(/^audit chain BROKEN at seq \d+ \(signature the signer does not keep\): this signature_replaced event/)
  })

  it('an event of a transaction signer.db keeps under another intent (both signed byte for byte the same) is not unknown; one naming that txHash for another request is', async () => {
    const s = signerStack()
    const a = newSig()
    await s.sign(a)
    // replaced_signatures keeps one row per txHash: the other intent's record of the same transaction is under a.
    await log!.append({ intentId: randomUUID(), event: 'signature_created', data: eventData(a) })
    await log!.checkpoint()
    await s.stop()
    expect(s.verify()).toMatchObject({ ok: true })
    // Found by review: a forged event borrowing a's txHash for another intent's request passed as such a twin.
    s.start()
    const forged = randomUUID()
    await log!.append({ intentId: forged, event: 'signature_replaced', data: { ...eventData(a), txRequestHash: hex32('other-req') } })
    await log!.checkpoint()
    await s.stop()
    expect(s.verify()).toMatchObject({ ok: false, problemCount: 1, problems: [{ kind: 'unknown_signature', seq: seqOf(s.file, forged, 'signature_replaced') }] })
  })

  // Found by review: verify reads signer.db, then walks the log; the signer stores a signature, then writes its event.
  it('a signature stored and logged while verify runs (after it read signer.db) is not unknown, when verify read the log\'s newest seq first', async () => {
    const s = signerStack()
    await s.sign(newSig())
    const logSeq = readNewestSeq(s.file)
    expect(logSeq).toBeGreaterThan(0)
    const anchor = loadAuditAnchor(s.keyFile, s.signerDbFile)
    await s.sign(newSig())
    await s.stop()
    // The checkpoint as signer.db records it at the end (the test's signer records it when it stops).
    const { latest } = loadAuditAnchor(s.keyFile, s.signerDbFile, { signatures: false })
    expect(verifyAuditChain(s.file, { ...anchor, latest, logSeqBeforeSignatures: logSeq! })).toMatchObject({ ok: true })
    expect(verifyAuditChain(s.file, { ...anchor, latest })).toMatchObject({ ok: false, problemCount: 1, kinds: { unknown_signature: 1 } })
    expect(s.cli().code).toBe(0)
  })

  it('a signature a crash left without its event (not marked audited) says the signer writes it at its next start; once it has, verify passes', async () => {
    const s = signerStack()
    const a = newSig()
    await s.sign(a, { audited: false, event: null })
    await decisions(1)
    await log!.checkpoint()
    await s.stop()
    expect(s.verify()).toMatchObject({
      ok: false,
      problemCount: 1,
      problems: [{ seq: null, kind: 'unaudited_signature', problem: expect.stringContaining('not yet marked audited, and the log has no signature_created event for it. A signer stopped between storing a signature and writing its event writes the event (marked late) at its next start: start the signer, then verify again.') }],
    })
    expect(s.cli().code).toBe(1)
    // The signer's next start writes the event, marked late, and seals it: the late event counts.
    s.start()
    await s.auditLate(a)
    await s.stop()
    expect(s.verify()).toMatchObject({ ok: true })
    expect(s.cli().code).toBe(0)
  })

  it("the event present but rewritten (tokenId, signerAddress) with every hash recomputed before the signer sealed it, then sealed: an unaudited signature naming the fields", async () => {
    const s = signerStack()
    await s.sign(newSig())
    const b = newSig()
    await s.sign(b, { seal: false })
    const seq = seqOf(s.file, b.intentId)
    rewriteAuditRow(s.file, seq, (d) => ({ ...d, tokenId: randomUUID(), signerAddress: ATTACKER }))
    await log!.checkpoint()
    await s.stop()
    // Chain, checkpoints and signer.db's latest checkpoint all hold: only signer.db's record of b tells.
    expect(verifyAuditChain(s.file)).toMatchObject({ ok: true })
    expect(s.verify()).toMatchObject({
      ok: false,
      problemCount: 1,
      problems: [
        {
          seq,
          kind: 'unaudited_signature',
          problem: `this signature_created event for signature ${b.txHash} of intent ${b.intentId} disagrees with signer.db's record of that signature on signerAddress and tokenId: the event was rewritten, or written by another process than the signer (signer.db, which only the signer writes, has what it signed)`,
        },
      ],
    })
    const r = s.cli()
    expect(r.code).toBe(1)
    expect(r.lines[0]).toBe(
      `audit chain BROKEN at seq ${seq} (unaudited signature): this signature_created event for signature ${b.txHash} of intent ${b.intentId} disagrees with signer.db's record of that signature on signerAddress and tokenId: the event was rewritten, or written by another process than the signer (signer.db, which only the signer writes, has what it signed)`,
    )
    expect(r.lines.join('\n')).not.toContain(SIGNED_TX_MARK)
  })

  it('each field of the event is compared: txRequestHash, nonce, tokenId set to null, and the event name', async () => {
    const s = signerStack()
    const sigs = [newSig(), newSig(), newSig(), newSig()]
    for (const sig of sigs) await s.sign(sig, { seal: false })
    const edits: Array<(d: Record<string, unknown>) => Record<string, unknown>> = [
      (d) => ({ ...d, txRequestHash: hex32('other') }),
      (d) => ({ ...d, nonce: (d.nonce as number) + 1 }),
      (d) => ({ ...d, tokenId: null }),
      (d) => d,
    ]
    edits.forEach((edit, i) => rewriteAuditRow(s.file, seqOf(s.file, sigs[i]!.intentId), edit))
    tamperAudit(s.file, (db) => db.prepare("UPDATE audit_events SET event = 'signature_replaced' WHERE intent_id = ?").run(sigs[3]!.intentId), seqOf(s.file, sigs[3]!.intentId))
    await log!.checkpoint()
    await s.stop()
    const result = s.verify()
    expect(result.ok ? [] : result.problems.map((p) => [p.kind, p.problem.replace(/^.* on (.*): the event was rewritten.*$/, '$1')])).toEqual([
      ['unaudited_signature', 'txRequestHash'],
      ['unaudited_signature', 'nonce'],
      ['unaudited_signature', 'tokenId'],
      ['unaudited_signature', 'its event name (signature_replaced, not signature_created)'],
    ])
  })

  it('a signature whose event comes after the last valid checkpoint is not sealed (a bogus checkpoint after it does not count)', async () => {
    const s = signerStack()
    await s.sign(newSig())
    const b = newSig()
    await s.sign(b, { seal: false })
    const seq = seqOf(s.file, b.intentId)
    await decisions(1)
    await s.stop()
    const lastCheckpoint = seq - 1
    expect(s.verify()).toMatchObject({
      ok: false,
      problemCount: 1,
      problems: [
        {
          seq,
          kind: 'signature_not_sealed',
          problem: `this signature_created event for signature ${b.txHash} of intent ${b.intentId} matches signer.db, but it comes after the last valid checkpoint (seq ${lastCheckpoint}), so no checkpoint vouches for it and a writer of audit.db could still remove or change it unnoticed. The signer writes a signature's event and a checkpoint sealing it in one commit: verify again after its next checkpoint (at most 10 s while it runs); if the event stays unsealed, a checkpoint after it was removed or the signer refused to sign one (its log says why)`,
        },
      ],
    })
    const r = s.cli()
    expect(r.code).toBe(1)
    expect(r.lines[0]).toMatch(new RegExp(`^audit chain BROKEN at seq ${seq} \\(signature not sealed\\): this signature_created event for signature ${b.txHash} of intent ${b.intentId} matches signer.db, but `))
    // A row named checkpoint that the signer did not sign seals nothing.
    const db = openAuditDb(s.file)
    const bogus = { seq: seq + 1, headHash: '0x', key: 'x', signature: 'x', intentId: 'system' }
    createBatchWriter(db)([{ id: randomUUID(), timestamp: Date.now(), intentId: 'system', event: CHECKPOINT_EVENT, dataJcs: canonicalize(bogus) }])
    db.close()
    expect(s.verify()).toMatchObject({ ok: false, problems: [{ kind: 'bad_checkpoint' }, { seq, kind: 'signature_not_sealed' }] })
  })

  it('a log with no valid checkpoint at all: every signature event is not sealed', async () => {
    const s = signerStack()
    const a = newSig()
    await s.sign(a, { seal: false })
    await s.stop()
    expect(s.verify()).toMatchObject({
      ok: false,
      problems: [{ seq: seqOf(s.file, a.intentId), kind: 'signature_not_sealed', problem: expect.stringContaining('matches signer.db, but the log has no valid checkpoint, so') }],
    })
  })
})

describe('verify cross-checks replaced signatures (replaced_signatures) with their events', () => {
  it("a replaced signature's signature_created row deleted before it was sealed: an unaudited signature naming what replaced it", async () => {
    const s = signerStack()
    const a1 = newSig()
    const a2 = newSig({ intentId: a1.intentId, txRequestHash: a1.txRequestHash })
    await s.sign(a1, { seal: false })
    tamperAudit(s.file, (db) => db.prepare('DELETE FROM audit_events WHERE seq = ?').run(seqOf(s.file, a1.intentId)))
    await log!.checkpoint()
    await s.replace(a1, a2)
    await s.stop()
    expect(verifyAuditChain(s.file)).toMatchObject({ ok: true })
    expect(s.verify()).toMatchObject({
      ok: false,
      problemCount: 1,
      problems: [
        {
          seq: null,
          kind: 'unaudited_signature',
          problem: `signer.db keeps signature ${a1.txHash} of intent ${a1.intentId}, replaced by ${a2.txHash}, and the log has no signature_created or signature_replaced event for it: rows were deleted from the log or the event was rewritten`,
        },
      ],
    })
    expect(s.cli().code).toBe(1)
  })

  it("a replacement's signature_replaced event rewritten before it was sealed (another replacedTxHash, the name of a first signature): unaudited, for the current and the replaced one", async () => {
    const s = signerStack()
    const a1 = newSig()
    const a2 = newSig({ intentId: a1.intentId, txRequestHash: a1.txRequestHash })
    const a3 = newSig({ intentId: a1.intentId, txRequestHash: a1.txRequestHash })
    const b1 = newSig()
    const b2 = newSig({ intentId: b1.intentId, txRequestHash: b1.txRequestHash })
    await s.sign(a1)
    await s.replace(a1, a2, { seal: false })
    const a2Seq = seqOf(s.file, a1.intentId, 'signature_replaced')
    // a2, replaced below: its event renamed to a first signature's.
    tamperAudit(s.file, (db) => db.prepare("UPDATE audit_events SET event = 'signature_created' WHERE seq = ?").run(a2Seq), a2Seq)
    await log!.checkpoint()
    await s.replace(a2, a3)
    await s.sign(b1)
    await s.replace(b1, b2, { seal: false })
    const b2Seq = seqOf(s.file, b1.intentId, 'signature_replaced')
    rewriteAuditRow(s.file, b2Seq, (d) => ({ ...d, replacedTxHash: hex32('elsewhere') }))
    await log!.checkpoint()
    await s.stop()
    expect(verifyAuditChain(s.file)).toMatchObject({ ok: true })
    expect(s.verify()).toMatchObject({
      ok: false,
      problemCount: 2,
      problems: [
        { seq: b2Seq, kind: 'unaudited_signature', problem: expect.stringContaining(`this signature_replaced event for signature ${b2.txHash} of intent ${b1.intentId} disagrees with signer.db's record of that signature on replacedTxHash: `) },
        {
          seq: a2Seq,
          kind: 'unaudited_signature',
          problem: expect.stringContaining(`this signature_created event for signature ${a2.txHash} of intent ${a1.intentId} disagrees with signer.db's record of that signature on its event name (signature_created, not signature_replaced): `),
        },
      ],
    })
  })

  it("a replaced signature's event is compared with its own row: a changed nonce is found, and the intent's txRequestHash applies to it", async () => {
    const s = signerStack()
    const a1 = newSig()
    const a2 = newSig({ intentId: a1.intentId, txRequestHash: a1.txRequestHash })
    await s.sign(a1, { seal: false })
    rewriteAuditRow(s.file, seqOf(s.file, a1.intentId), (d) => ({ ...d, nonce: 99, txRequestHash: hex32('other') }))
    await log!.checkpoint()
    await s.replace(a1, a2)
    await s.stop()
    expect(s.verify()).toMatchObject({
      ok: false,
      problemCount: 1,
      problems: [{ kind: 'unaudited_signature', problem: expect.stringContaining(`signature ${a1.txHash} of intent ${a1.intentId} disagrees with signer.db's record of that signature on txRequestHash and nonce: `) }],
    })
  })
})

describe("a signer.db whose signatures cannot be read is an unreadable anchor, as before", () => {
  it('a signatures table without the columns the signer writes: exit 2, cannot read the audit anchor', async () => {
    const s = signerStack()
    await decisions(1)
    await log!.checkpoint()
    await s.stop()
    s.signerDb.exec('DROP TABLE signatures; CREATE TABLE signatures (intent_id TEXT PRIMARY KEY)')
    const r = s.cli()
    expect(r.code).toBe(2)
    expect(r.lines).toEqual([expect.stringMatching(new RegExp(`^cannot read the audit anchor \\(${escapeRegExp(s.keyFile)}, ${escapeRegExp(s.signerDbFile)}\\): no such column: `))])
  })
})

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

describe('createSignatureCheck().unmatched(): what a re-anchor writes again', () => {
  it('yields each kept signature with no event that matches it (missing, or rewritten), and none that has one', async () => {
    const s = signerStack()
    const kept = newSig()
    const missing = newSig()
    const rewritten = newSig()
    await s.sign(kept)
    await s.sign(missing, { event: null })
    await s.sign(rewritten, { event: { ...eventData(rewritten), nonce: 99_999 } })
    await s.stop()
    const signatures = readSignerSignatures(s.signerDb)!
    const check = createSignatureCheck(signatures)
    const db = new Database(s.file, { readonly: true })
    try {
      for (const r of db.prepare<[], { seq: number; event: string; intent_id: string; data: string }>('SELECT seq, event, intent_id, data FROM audit_events ORDER BY seq').iterate()) check.event(r)
    } finally {
      db.close()
    }
    expect([...check.unmatched()].map((u) => u.txHash)).toEqual([missing.txHash, rewritten.txHash])
  })
})

describe('a rewritten signature event stays reported when a matching one follows (review)', () => {
  it('the signer writing the event again, late, after a rewrite does not make verify pass over the rewrite; rewritten() names it', async () => {
    const s = signerStack()
    const a = newSig()
    await s.sign(a, { event: { ...eventData(a), nonce: 4242 } })
    await s.auditLate(a)
    await s.stop()
    expect(s.verify()).toMatchObject({
      ok: false,
      problemCount: 1,
      problems: [{ kind: 'unaudited_signature', problem: expect.stringContaining(`disagrees with signer.db's record of that signature on nonce`) }],
    })
    const check = createSignatureCheck(readSignerSignatures(s.signerDb)!)
    const db = new Database(s.file, { readonly: true })
    try {
      for (const r of db.prepare<[], { seq: number; event: string; intent_id: string; data: string }>('SELECT seq, event, intent_id, data FROM audit_events ORDER BY seq').iterate()) check.event(r)
    } finally {
      db.close()
    }
    expect([...check.rewritten()].map((r) => r.txHash)).toEqual([a.txHash])
    expect([...check.unmatched()]).toEqual([])
  })
})
