import { generateKeyPairSync } from 'node:crypto'
import { copyFileSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { rewriteAuditRow, stripCheckpoints, tamperAudit, truncateAudit } from '../server/testing/auditTamper.js'
import { seededRandom } from '../server/testing/seededRandom.js'
import { CheckpointRefusedError, openAuditLog, type AuditLog, type WrittenCheckpoint } from './auditLog.js'
import { auditKeyFingerprint, parseAuditPublicKey, signCheckpoint, type LatestCheckpoint } from './checkpoint.js'
import { runAuditCli } from '../server/audit/cli.js'
import { verifyAuditChain, type AuditProblem, type AuditVerification } from '../server/audit/verify.js'

let log: AuditLog | undefined
afterEach(async () => {
  await log?.close()
  log = undefined
})

/** A log with checkpoints, as the signer opens it, and its latest checkpoint as signer.db would keep it. */
function signedLog(fsync: 'in-commit' | 'grouped' = 'in-commit') {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cs-cp-'))
  const file = path.join(dir, 'audit.db')
  const { privateKey, publicKey } = generateKeyPairSync('ed25519')
  const state: { latest: LatestCheckpoint | null } = { latest: null }
  const written: WrittenCheckpoint[] = []
  const refusals: string[] = []
  log = openAuditLog(file, {
    fsync,
    checkpoints: {
      sign: (head) => ({ key: auditKeyFingerprint(publicKey), signature: signCheckpoint(privateKey, head.seq, head.hash) }),
      written: (cp) => {
        written.push(cp)
        state.latest = { seq: cp.seq, hash: cp.hash }
      },
      anchor: () => state.latest,
      refused: (why) => refusals.push(why),
    },
  })
  const anchor = () => ({ publicKey, latest: state.latest })
  return { dir, file, publicKey, privateKey, state, written, refusals, anchor }
}

/** The first problem a failed verification lists. */
function firstProblem(result: AuditVerification): AuditProblem | undefined {
  return result.ok ? undefined : result.problems[0]
}

async function fill(l: AuditLog, n: number, from = 0) {
  for (let i = from; i < from + n; i++) await l.append({ intentId: `i-${i}`, event: 'policy_evaluated', data: { approved: true, i } })
}

describe('grouped fsync (the signer)', () => {
  it('appends that arrive together share one commit, one checkpoint sealing all of them in that commit, and one fsync', async () => {
    const s = signedLog('grouped')
    const appended = await Promise.all(Array.from({ length: 20 }, (_, i) => log!.append({ intentId: `i-${i}`, event: 'signature_created', data: { i } }, { checkpoint: true })))
    // Appended in one tick: one transaction (the events and their checkpoint), one fsync.
    expect(log!.syncStats()).toEqual({ commits: 1, syncs: 1, syncMs: expect.any(Number), waitersPerSync: { 1: 1 } })
    expect(s.written).toEqual([{ seq: 21, hash: log!.head().hash, sealed: { seq: 20, hash: expect.any(String) } }])
    expect(appended.map((e) => e.data.i)).toEqual(Array.from({ length: 20 }, (_, i) => i))
    // More in later ticks, while that fsync runs: each tick's commit carries its own checkpoint; they share the next fsync.
    const more = log!.append({ intentId: 'i-20', event: 'signature_created', data: {} }, { checkpoint: true })
    await new Promise((r) => setImmediate(r))
    await Promise.all([more, log!.append({ intentId: 'i-21', event: 'signature_created', data: {} }, { checkpoint: true })])
    expect(s.written.length).toBe(log!.syncStats()!.commits)
    expect(s.written.map((c) => c.sealed.seq)).toEqual([20, 22, 24])
    expect(verifyAuditChain(s.file, s.anchor())).toMatchObject({ ok: true, rows: log!.head().seq, checkpoints: 3 })
  })

  // Found by review: the checkpoint was written in its own transaction just before the next fsync, after at least one
  // event-loop turn. A writer of audit.db (a compromised gateway, the audit group) that took the lock in that moment
  // and deleted or rewrote the signature's row had its edit sealed by that checkpoint: the signature was returned, and
  // verify passed. Now the checkpoint is in the batch's own transaction, and signer.db learns of it once it is durable.
  const attacks: Array<[string, (file: string, seq: number) => void]> = [
    ['deleted, the rest re-linked', (file, seq) => tamperAudit(file, (db) => void db.prepare('DELETE FROM audit_events WHERE seq = ?').run(seq), seq)],
    ['rewritten with another txHash, hashes recomputed', (file, seq) => void rewriteAuditRow(file, seq, (d) => ({ ...d, txHash: '0xbbbb' }))],
    ['cut off with everything after it', (file, seq) => tamperAudit(file, (db) => void db.prepare('DELETE FROM audit_events WHERE seq >= ?').run(seq))],
  ]
  for (const [what, attack] of attacks) {
    it(`a signature's row ${what} by another writer between its commit and its fsync fails verify`, async () => {
      const s = signedLog('grouped')
      await fill(log!, 3)
      await log!.checkpoint()
      const seq = log!.head().seq + 1
      const signed = log!.append({ intentId: 'i-sig', event: 'signature_created', data: { txHash: '0xaaaa' } }, { checkpoint: true })
      // After the append's commit (its setImmediate came first), before the fsync that resolves it.
      let attacked = false
      setImmediate(() => {
        attack(s.file, seq)
        attacked = true
      })
      await signed
      expect(attacked).toBe(true)
      expect(verifyAuditChain(s.file, s.anchor()).ok).toBe(false)
    })
  }

  it('a bare checkpoint() gets its own checkpoint even while an fsync is running and nothing new was written', async () => {
    const s = signedLog('grouped')
    const first = log!.append({ intentId: 'i-1', event: 'signature_created', data: {} }, { checkpoint: true })
    await new Promise((r) => setImmediate(r)) // the first fsync has started
    const cp = await log!.checkpoint()
    await first
    expect(cp).toEqual(s.written.at(-1))
    expect(cp.sealed.seq).toBe(2) // the event and the first batch's checkpoint
    expect(verifyAuditChain(s.file, s.anchor())).toMatchObject({ ok: true, rows: 3, checkpoints: 2 })
  })

  it('appendSync writes durably on the calling thread, and a closed log refuses appends', async () => {
    const s = signedLog('grouped')
    log!.appendSync({ intentId: 'system', event: 'signer_stopped', data: {} })
    expect(log!.syncStats()!.commits).toBe(1)
    await log!.close()
    await expect(log!.append({ intentId: 'x', event: 'e', data: {} })).rejects.toThrow(/closed/)
    expect(verifyAuditChain(s.file, { publicKey: s.publicKey, latest: null })).toMatchObject({ ok: true, rows: 1 })
  })
})

describe('signed checkpoints', () => {
  it('seal the batch they are committed with: the checkpoint row follows the row it names', async () => {
    const s = signedLog()
    await fill(log!, 3)
    await log!.append({ intentId: 'i-x', event: 'signature_created', data: { txHash: '0x1' } }, { checkpoint: true })
    const [cp, sig] = log!.list({ limit: 2 })
    expect(sig!.event).toBe('signature_created')
    expect(cp).toMatchObject({ event: 'checkpoint', intentId: 'system', data: { seq: 4 } })
    expect(s.written).toEqual([{ seq: 5, hash: log!.head().hash, sealed: { seq: 4, hash: expect.stringMatching(/^0x[0-9a-f]{64}$/) } }])
    expect(verifyAuditChain(s.file, s.anchor())).toEqual({ ok: true, rows: 5, checkpoints: 1, lastCheckpointSeq: 5, reanchors: [] })
  })

  it('appends made while a commit is in flight share one checkpoint (one per commit batch)', async () => {
    const s = signedLog()
    await Promise.all(Array.from({ length: 20 }, (_, i) => log!.append({ intentId: `i-${i}`, event: 'signature_created', data: { i } }, { checkpoint: true })))
    expect(s.written.length).toBeLessThan(20)
    expect(verifyAuditChain(s.file, s.anchor())).toMatchObject({ ok: true, rows: 20 + s.written.length, checkpoints: s.written.length })
  })

  it('checkpoint() seals the head alone; a log without a key refuses checkpoints', async () => {
    const s = signedLog()
    await fill(log!, 2)
    const cp = await log!.checkpoint()
    expect(cp).toMatchObject({ seq: 3, sealed: { seq: 2 } })
    const plain = openAuditLog(path.join(s.dir, 'other.db'))
    await expect(plain.checkpoint()).rejects.toThrow(/no checkpoint key/)
    await expect(plain.append({ intentId: 'i', event: 'e', data: {} }, { checkpoint: true })).rejects.toThrow(/no checkpoint key/)
    await plain.close()
  })

  it('the rewrite attack: triggers dropped, one field flipped, every later hash recomputed -> sealed rows changed, at every checkpoint after it', async () => {
    const s = signedLog()
    await fill(log!, 10)
    await log!.checkpoint()
    await fill(log!, 5, 10)
    await log!.checkpoint()
    await log!.close()
    log = undefined
    expect(verifyAuditChain(s.file)).toMatchObject({ ok: true })
    rewriteAuditRow(s.file, 4, (d) => ({ ...d, approved: false }))
    // The hash chain alone is fooled, as the issue found...
    expect(verifyAuditChain(s.file)).toMatchObject({ ok: true, rows: 17 })
    // ...the checkpoints after the edit are not, nor is signer.db's latest.
    expect(verifyAuditChain(s.file, s.anchor())).toMatchObject({
      ok: false,
      problems: [
        { seq: 11, kind: 'sealed_rows_changed', problem: expect.stringContaining('rows up to 10 were changed after they were sealed') },
        { seq: 17, kind: 'sealed_rows_changed' },
        { seq: 17, kind: 'anchor_mismatch' },
      ],
    })
  })

  it.each(['in-commit', 'grouped'] as const)(
    'the rewrite attack while the signer runs (%s fsync): sealed rows rewritten, checkpoints dropped, every hash recomputed, the log padded; the signer signs no checkpoint over it and verify still fails',
    async (fsync) => {
      const s = signedLog(fsync)
      await fill(log!, 5)
      await log!.checkpoint() // seq 6 seals 5
      await fill(log!, 3, 5) // 7..9
      const recorded = s.state.latest
      // With the signer's log open: the edit, the checkpoints gone, the chain re-hashed, padded past its old length.
      rewriteAuditRow(s.file, 3, (d) => ({ ...d, approved: false }))
      stripCheckpoints(s.file)
      tamperAudit(s.file, (db) => db.prepare("INSERT INTO audit_events (seq, id, timestamp, intent_id, event, data, prev_hash, hash) SELECT seq + 1, id, timestamp, intent_id, event, data, '', '' FROM audit_events WHERE seq = (SELECT max(seq) FROM audit_events)").run(), 1)
      expect(verifyAuditChain(s.file)).toMatchObject({ ok: true }) // the chain alone is consistent
      // The signer's next checkpoint (its timer, a signature): refused, nothing signed, signer.db's record unchanged.
      await expect(log!.checkpoint()).rejects.toThrow(/audit checkpoint refused: the row at seq 6, the last checkpoint the signer wrote, no longer has the hash it recorded/)
      // The event is written, and its append says it went unsealed: the signer hands out nothing on it.
      await expect(log!.append({ intentId: 'i-sig', event: 'signature_created', data: {} }, { checkpoint: true })).rejects.toThrow(CheckpointRefusedError)
      expect(log!.list({ limit: 1 })[0]).toMatchObject({ intentId: 'i-sig', event: 'signature_created' })
      expect(s.state.latest).toEqual(recorded)
      expect(s.written).toHaveLength(1)
      expect(s.refusals.length).toBeGreaterThanOrEqual(2)
      expect(log!.list({ limit: 20 }).filter((e) => e.event === 'checkpoint')).toEqual([])
      expect(verifyAuditChain(s.file, s.anchor())).toMatchObject({ ok: false })
    },
  )

  it('checkpoints go on over a log that continues from the last recorded one (rows from other processes in between)', async () => {
    const s = signedLog()
    await fill(log!, 3)
    await log!.checkpoint()
    const other = openAuditLog(s.file, { writer: 'worker' })
    try {
      await Promise.all(Array.from({ length: 30 }, (_, i) => other.append({ intentId: `g-${i}`, event: 'tx_built', data: { i } })))
    } finally {
      await other.close()
    }
    await log!.checkpoint()
    expect(s.refusals).toEqual([])
    expect(s.written).toHaveLength(2)
    expect(verifyAuditChain(s.file, s.anchor())).toMatchObject({ ok: true, rows: 35, checkpoints: 2 })
  })

  it('a rewrite that also fixes the checkpoint fields fails its signature', async () => {
    const s = signedLog()
    await fill(log!, 3)
    await log!.checkpoint()
    await log!.close()
    log = undefined
    rewriteAuditRow(s.file, 2, (d) => ({ ...d, approved: false }))
    const db = (await import('better-sqlite3')).default(s.file)
    const prev = db.prepare('SELECT hash FROM audit_events WHERE seq = 3').get() as { hash: string }
    db.close()
    rewriteAuditRow(s.file, 4, (d) => ({ ...d, headHash: prev.hash }))
    expect(firstProblem(verifyAuditChain(s.file, { publicKey: s.publicKey, latest: null }))).toMatchObject({ kind: 'bad_checkpoint', seq: 4, problem: expect.stringMatching(/does not verify/) })
  })

  it('a checkpoint signed with another key is refused, naming both keys', async () => {
    const s = signedLog()
    await fill(log!, 2)
    await log!.checkpoint()
    const other = generateKeyPairSync('ed25519').publicKey
    expect(firstProblem(verifyAuditChain(s.file, { publicKey: other, latest: null }))).toMatchObject({ kind: 'bad_checkpoint', problem: expect.stringContaining(auditKeyFingerprint(other)) })
  })

  it('truncation: deleting the last rows leaves a log shorter than the latest checkpoint', async () => {
    const s = signedLog()
    await fill(log!, 60)
    await log!.checkpoint()
    await log!.close()
    log = undefined
    truncateAudit(s.file, 51)
    expect(verifyAuditChain(s.file)).toMatchObject({ ok: true, rows: 10 })
    expect(verifyAuditChain(s.file, s.anchor())).toMatchObject({ ok: false, rows: 10, problems: [{ seq: 11, kind: 'truncated', problem: expect.stringContaining('latest checkpoint at seq 61') }] })
  })

  it('removing every checkpoint and renumbering is caught by the latest checkpoint in signer.db', async () => {
    const s = signedLog()
    await fill(log!, 5)
    await log!.checkpoint()
    await fill(log!, 5, 5)
    await log!.close()
    log = undefined
    stripCheckpoints(s.file)
    expect(verifyAuditChain(s.file)).toMatchObject({ ok: true, rows: 10 })
    expect(verifyAuditChain(s.file, s.anchor())).toMatchObject({ ok: false, problems: [{ seq: 6, kind: 'anchor_mismatch', problem: expect.stringContaining("not the signer's latest checkpoint") }] })
  })

  it('events after the last checkpoint are not covered: that is the documented limit', async () => {
    const s = signedLog()
    await fill(log!, 3)
    await log!.checkpoint()
    await fill(log!, 3, 3)
    await log!.close()
    log = undefined
    rewriteAuditRow(s.file, 6, (d) => ({ ...d, approved: false }))
    expect(verifyAuditChain(s.file, s.anchor())).toMatchObject({ ok: true, rows: 7, lastCheckpointSeq: 4 })
  })

  it('the CLI reads audit-key.pub and signer.db from the data dir, names the cause and exits 1; --chain-only skips the anchor', async () => {
    const s = signedLog()
    await fill(log!, 4)
    await log!.checkpoint()
    await log!.close()
    log = undefined
    writeFileSync(path.join(s.dir, 'audit-key.pub'), s.publicKey.export({ type: 'spki', format: 'pem' }) as string)
    const Database = (await import('better-sqlite3')).default
    const signerDb = new Database(path.join(s.dir, 'signer.db'))
    signerDb.exec('CREATE TABLE audit_checkpoint (id INTEGER PRIMARY KEY, seq INTEGER, hash TEXT, head_seq INTEGER, head_hash TEXT, written_at INTEGER)')
    signerDb.prepare('INSERT INTO audit_checkpoint VALUES (1, ?, ?, 0, ?, 0)').run(s.state.latest!.seq, s.state.latest!.hash, '')
    signerDb.close()
    const io = () => {
      const out: string[] = []
      return { out, io: { out: (x: string) => out.push(x), err: (x: string) => out.push(x), env: {} } }
    }
    const ok = io()
    expect(runAuditCli(['verify', '--data-dir', s.dir], ok.io)).toBe(0)
    expect(ok.out).toEqual([
      `audit chain OK: 5 events, 1 signed checkpoints (the last at seq 5, 0 events after it not yet covered); checked with audit key ${auditKeyFingerprint(s.publicKey)} (${path.join(s.dir, 'audit-key.pub')}) and the latest checkpoint in ${path.join(s.dir, 'signer.db')}`,
    ])
    truncateAudit(s.file, 2)
    const cut = io()
    expect(runAuditCli(['verify', '--data-dir', s.dir], cut.io)).toBe(1)
    expect(cut.out[0]).toMatch(/^audit chain BROKEN at seq 4 \(log shorter than the last checkpoint\): the log ends at seq 3/)
    const chain = io()
    expect(runAuditCli(['verify', '--db', s.file, '--chain-only'], chain.io)).toBe(0)
    expect(chain.out[0]).toContain('hash chain only')
    // audit.db deleted (its directory is group-writable): the log cut to nothing, exit 1, not "could not be read" (found by review).
    const moved = `${s.file}.moved`
    renameSync(s.file, moved)
    try {
      const gone = io()
      expect(runAuditCli(['verify', '--data-dir', s.dir], gone.io)).toBe(1)
      expect(gone.out).toEqual([`audit chain BROKEN at seq 1 (log shorter than the last checkpoint): there is no audit log at ${s.file}, but signer.db records a checkpoint at seq 5: the log was deleted`, 'audit chain BROKEN: 1 problem'])
      // With no checkpoint recorded anywhere there is nothing to have lost: still "no audit log" (exit 2).
      const bare = io()
      expect(runAuditCli(['verify', '--db', s.file, '--chain-only'], bare.io)).toBe(2)
      expect(bare.out).toEqual([`no audit log at ${s.file}`])
    } finally {
      renameSync(moved, s.file)
    }
    const nokey = io()
    expect(runAuditCli(['verify', '--db', s.file, '--audit-key', path.join(s.dir, 'missing.pub'), '--signer-db', path.join(s.dir, 'signer.db')], nokey.io)).toBe(2)
    expect(nokey.out[0]).toContain("the signer's public audit key not found at")
    // An empty --data-dir is not the working directory.
    const empty = io()
    expect(runAuditCli(['verify', '--data-dir', ''], empty.io)).toBe(1)
    expect(empty.out).toEqual(['--data-dir needs a directory (it was given empty)'])
  })

  it('audit-key.pub must be an Ed25519 public key', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ type: 'spki', format: 'pem' }) as string
    expect(() => parseAuditPublicKey(rsa)).toThrow(/Ed25519/)
    expect(() => parseAuditPublicKey('hello')).toThrow(/not a PEM public key/)
  })
})

describe('random tampering (seeded; AUDIT_TAMPER_SEED replays a run)', () => {
  const seed = Number(process.env.AUDIT_TAMPER_SEED ?? 20261125)
  const COLUMNS = ['id', 'timestamp', 'intent_id', 'event', 'data', 'prev_hash', 'hash'] as const

  it('every change to rows a checkpoint covers is found, and every change that leaves the chain unrecomputed, wherever it is', async () => {
    const s = signedLog()
    for (let batch = 0; batch < 8; batch++) {
      await fill(log!, 10, batch * 10)
      await log!.checkpoint()
    }
    await fill(log!, 4, 80) // an unsealed tail: the documented limit, changed below only without recomputing
    await log!.close()
    log = undefined
    const clean = verifyAuditChain(s.file, s.anchor())
    if (!clean.ok) throw new Error(clean.problems[0]!.problem)
    const total = clean.rows
    // Rows before the last checkpoint row are sealed by it.
    const sealed = clean.lastCheckpointSeq - 1
    const rng = seededRandom(seed)
    const row = (max: number) => 1 + rng.int(max)
    const shift = (db: import('better-sqlite3').Database, fromSeq: number, by: number) => {
      db.prepare('UPDATE audit_events SET seq = -(seq + ?) WHERE seq >= ?').run(by, fromSeq)
      db.prepare('UPDATE audit_events SET seq = -seq WHERE seq < 0').run()
    }
    const kinds = {
      /** One column of any row changed, the chain left as it was. */
      column: (file: string) => {
        const seq = row(total)
        const column = rng.pick(COLUMNS)
        tamperAudit(file, (db) => {
          const value = column === 'timestamp' ? `timestamp + ${1 + rng.int(1000)}` : column === 'data' ? `json_set(data, '$.approved', json('false'), '$.x', ${rng.int(9)})` : `${column} || 'x'`
          db.prepare(`UPDATE audit_events SET ${column} = ${value} WHERE seq = ?`).run(seq)
        })
        return `${column} of row ${seq}`
      },
      /** One column of any row given a value of another kind (SQLite keeps any type in any column), the chain left as it was. */
      malformed: (file: string) => {
        const seq = row(total)
        const [column, value] = rng.pick([
          ['data', `'{"x":1e400}'`],
          ['data', `'not json'`],
          ['data', `X'7b7d'`],
          ['data', `'[]'`],
          ['timestamp', `'soon'`],
          ['timestamp', '1.5'],
          ['id', '42'],
          ['intent_id', `X'00ff'`],
          ['event', '7'],
          ['prev_hash', `X'00'`],
          ['hash', `upper(hash)`],
        ] as const)
        tamperAudit(file, (db) => db.prepare(`UPDATE audit_events SET ${column} = ${value} WHERE seq = ?`).run(seq))
        return `${column} of row ${seq} set to ${value}`
      },
      /** The data of a sealed row changed and every later hash recomputed. */
      rewrite: (file: string) => {
        const seq = row(sealed)
        tamperAudit(file, (db) => db.prepare("UPDATE audit_events SET data = json_set(data, '$.approved', json('false')) WHERE seq = ?").run(seq), seq)
        return `row ${seq} rewritten, chain recomputed`
      },
      /** A row other than the last deleted, nothing else. */
      hole: (file: string) => {
        const seq = row(total - 1)
        tamperAudit(file, (db) => db.prepare('DELETE FROM audit_events WHERE seq = ?').run(seq))
        return `row ${seq} deleted`
      },
      /** A sealed row deleted, the rest renumbered and recomputed. */
      removal: (file: string) => {
        const seq = row(sealed)
        tamperAudit(
          file,
          (db) => {
            db.prepare('DELETE FROM audit_events WHERE seq = ?').run(seq)
            shift(db, seq + 1, -1)
          },
          seq,
        )
        return `row ${seq} removed, later rows renumbered, chain recomputed`
      },
      /** A row inserted among the sealed ones, the rest renumbered and recomputed. */
      insertion: (file: string) => {
        const seq = row(sealed)
        tamperAudit(
          file,
          (db) => {
            shift(db, seq, 1)
            db.prepare("INSERT INTO audit_events (seq, id, timestamp, intent_id, event, data, prev_hash, hash) VALUES (?, 'forged', 1, 'i-forged', 'approval_granted', '{}', '', '')").run(seq)
          },
          seq,
        )
        return `a row inserted at ${seq}, chain recomputed`
      },
      /** Two rows' contents swapped, recomputed from the first when it is sealed, else not at all. */
      swap: (file: string) => {
        const a = row(total)
        let b = row(total)
        if (b === a) b = a === total ? a - 1 : a + 1
        const [lo, hi] = a < b ? [a, b] : [b, a]
        const recompute = lo <= sealed
        tamperAudit(
          file,
          (db) => {
            db.prepare('UPDATE audit_events SET seq = -1 WHERE seq = ?').run(lo)
            db.prepare('UPDATE audit_events SET seq = ? WHERE seq = ?').run(lo, hi)
            db.prepare('UPDATE audit_events SET seq = ? WHERE seq = -1').run(hi)
          },
          recompute ? lo : undefined,
        )
        return `rows ${lo} and ${hi} swapped${recompute ? ', chain recomputed' : ''}`
      },
      /** Rows deleted from the end, back past the last checkpoint. */
      truncation: (file: string) => {
        const n = total - sealed - 1 + row(sealed)
        tamperAudit(file, (db) => db.prepare('DELETE FROM audit_events WHERE seq > ?').run(total - n))
        return `the last ${n} rows deleted`
      },
    }
    const found: string[] = []
    for (let trial = 0; trial < 140; trial++) {
      const file = path.join(s.dir, `trial-${trial}.db`)
      copyFileSync(s.file, file)
      const kind = rng.pick(Object.keys(kinds) as Array<keyof typeof kinds>)
      const what = kinds[kind](file)
      const result = verifyAuditChain(file, s.anchor())
      expect(result.ok, `seed ${seed} trial ${trial}: ${what} was not found`).toBe(false)
      found.push(kind)
      rmSync(file)
    }
    // Every kind of tampering was tried.
    expect(new Set(found)).toEqual(new Set(Object.keys(kinds)))
  })
})
