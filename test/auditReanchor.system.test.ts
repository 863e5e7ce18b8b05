// audit.db restored from an older backup (the documented answer to a
// tampered log) used to end the signer for good: its recorded checkpoint was
// no longer in the log, so it refused to seal, refused to start ("audit
// checkpoint refused … is gone"), and nothing could move it on. Any writer of
// audit.db (the gateway's or the approver's user) could do the same by
// cutting rows. Now the signer starts and signs with the seal refused (as it
// already did when the refusal came while it ran), and the operator, with the
// signer stopped, re-anchors the log with `countersign-signer audit-reanchor`:
// the signatures the log lost are written again from signer.db, marked late,
// and a checkpoint seals the log as it stands. A log whose rows were changed
// in place is refused. The real signer process, its CLI and verify.
import { execFile } from 'node:child_process'
import { copyFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import Database from 'better-sqlite3'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { buildTransaction, canonicalize, createRpcClient, defaultRouterTable, openAuditLog, SIGNER_SOCKET, type SignResult } from '@countersign/shared'
import { rewriteAuditRow, stripCheckpoints, tamperAudit } from '@countersign/shared/testing/auditTamper'
import type { Address } from 'viem'
import { anvilAccounts } from './support/anvil.js'
import { BOB, intentFor } from './support/intents.js'
import { repoRoot, spawnService } from './support/processes.js'
import { entries, importKey, Stack } from './support/stack.js'

const run = promisify(execFile)
const owner = anvilAccounts[4]!
const WALLET = owner.address as Address
const routers = defaultRouterTable()

let stack: Stack
let nonce = 0
const file = (name: string) => path.join(stack.dataDir, name)

/** Signs `n` fresh transfers over the signer's socket; their txHashes. */
async function sign(n: number): Promise<string[]> {
  const client = createRpcClient({ socketPath: path.join(stack.dataDir, 'run', SIGNER_SOCKET) })
  try {
    const hashes: string[] = []
    for (let i = 0; i < n; i++) {
      const intent = intentFor(WALLET, { type: 'transfer_native', to: BOB, amount: String(1000 + nonce) })
      const call = { intent, txRequest: buildTransaction(intent, routers).txRequest, nonce: nonce++, gas: '21000', maxFeePerGas: '2000000000', maxPriorityFeePerGas: '1000000000' }
      hashes.push((await client.call<SignResult>('sign', call)).txHash)
    }
    return hashes
  } finally {
    client.close()
  }
}

/** A command's exit code and its output, whatever the code. */
async function exec(args: string[]): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, args, { env: { PATH: process.env.PATH ?? '' } })
    return { code: 0, out: stdout + stderr }
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string }
    return { code: typeof e.code === 'number' ? e.code : -1, out: (e.stdout ?? '') + (e.stderr ?? '') }
  }
}

const verify = () => exec([path.join(repoRoot, 'shared/dist/server/audit/cli.js'), 'verify', '--data-dir', stack.dataDir])
/** Through the installed bin, as an operator runs it. */
const reanchor = (...args: string[]) => exec([path.join(repoRoot, 'services/signer/bin/countersign-signer.js'), 'audit-reanchor', '--data-dir', stack.dataDir, ...args])

function auditRows(): { seq: number; event: string; data: Record<string, unknown> }[] {
  const db = new Database(file('audit.db'), { readonly: true })
  try {
    return db
      .prepare<[], { seq: number; event: string; data: string }>('SELECT seq, event, data FROM audit_events ORDER BY seq')
      .all()
      .map((r) => ({ ...r, data: JSON.parse(r.data) as Record<string, unknown> }))
  } finally {
    db.close()
  }
}

function recordedCheckpoint(): { seq: number; hash: string } | undefined {
  const db = new Database(file('signer.db'), { readonly: true })
  try {
    return db.prepare<[], { seq: number; hash: string }>('SELECT seq, hash FROM audit_checkpoint WHERE id = 1').get()
  } finally {
    db.close()
  }
}

/** An event appended as another process (the approver) writes one: no checkpoint with it. */
async function appendAsApprover(): Promise<void> {
  const other = openAuditLog(file('audit.db'))
  try {
    await other.append({ intentId: 'system', event: 'approval_granted', data: { approver: 'alice', amountWei: '5' } })
  } finally {
    await other.close()
  }
}

/** A signer of its own for each test, on a fresh data directory. */
beforeEach(async () => {
  stack = new Stack({ policy: { maxTxPerHour: 100_000, requireApprovalAbove: { valueWei: '1000000000000000000000' } } })
  nonce = 0
  expect(await importKey(stack.dataDir, owner.privateKey)).toBe(WALLET)
  await stack.startSigner()
}, 120_000)

afterEach(async () => {
  await stack?.stop()
})

/**
 * Starts the signer with its sockets' listen callbacks held back 300 ms (a
 * busy host): a start checkpoint refused meanwhile was an unhandled
 * rejection, and the process died (found by review).
 */
async function startSignerSlowListen(): Promise<void> {
  const preload = path.join(stack.dataDir, 'slow-listen.mjs')
  writeFileSync(
    preload,
    [
      "import net from 'node:net'",
      'const listen = net.Server.prototype.listen',
      'net.Server.prototype.listen = function (...args) {',
      "  const done = typeof args.at(-1) === 'function' ? args.pop() : undefined",
      '  return listen.call(this, ...args, () => setTimeout(() => done?.(), 300))',
      '}',
    ].join('\n'),
  )
  stack.signer = spawnService('signer', entries.signer, { ...stack.env, NODE_OPTIONS: `--import ${preload}` })
  await stack.signer.waitForLine(/signer ready/, 20_000)
}

describe('audit.db restored from an older backup', () => {
  it('the signer starts and signs with the seal refused; the operator re-anchors it; verify passes and the signer seals again', async () => {
    await sign(2)
    // Another process's event, not sealed yet when the backup is taken.
    await appendAsApprover()
    const backup = path.join(stack.dataDir, 'audit-backup.db')
    // SQLite's online backup, as docs/operations.md has it, while the signer runs.
    const live = new Database(file('audit.db'), { readonly: true })
    await live.backup(backup)
    live.close()
    const backupHead = auditRows().at(-1)!.seq
    const lost = await sign(3)
    await stack.signer.stop()
    const before = recordedCheckpoint()!
    const restore = () => {
      for (const suffix of ['-wal', '-shm']) rmSync(file(`audit.db${suffix}`), { force: true })
      copyFileSync(backup, file('audit.db'))
    }
    restore()
    expect(auditRows().at(-1)!.seq).toBeLessThan(before.seq)

    // Before: "countersign signer: CheckpointRefusedError: audit checkpoint refused: the row at seq N … is gone", exit 1.
    await startSignerSlowListen()
    expect(stack.signer.output()).toMatch(/AUDIT LOG TAMPERED/)
    expect(stack.signer.output()).toMatch(/audit log not sealed at start: signing goes on/)
    const during = await sign(1)

    const broken = await verify()
    expect(broken.code).toBe(1)
    expect(broken.out).toMatch(/log shorter than the last checkpoint/)
    for (const txHash of lost) expect(broken.out).toMatch(new RegExp(`unaudited signature\\): signer.db holds signature ${txHash}`))
    expect(broken.out).toMatch(new RegExp(`signature not sealed\\): this signature_created event for signature ${during[0]}`))

    // Not while the signer runs: it seals and records checkpoints itself.
    const running = await reanchor('--yes')
    expect(running.code).toBe(1)
    expect(running.out).toMatch(/another signer is running on the data directory/)
    await stack.signer.stop()

    // What the signer appended over the restored log sits where it had sealed other rows: a re-anchor cannot tell that
    // from a rewrite, and refuses it. The operator restores again and re-anchors before anything appends.
    const appended = await reanchor('--yes')
    expect(appended.code).toBe(1)
    expect(appended.out).toMatch(/refused: row \d+ is not the row the signer sealed at that seq .*events were appended after an older backup was restored/s)
    expect(recordedCheckpoint()).toEqual(before)
    restore()

    const rowsBefore = auditRows().length
    const dry = await reanchor()
    expect(dry.code).toBe(1)
    expect(dry.out).toMatch(/plan: take the log as it stands .* write audit_reanchored, 4 signature event\(s\) the log lost/)
    expect(dry.out).toMatch(/nothing written: run again with --yes/)
    // The row no checkpoint of the signer's vouches for (the other process's event) is named before anything is written.
    expect(dry.out).toMatch(new RegExp(`rows ${backupHead} to ${backupHead} come after every row a checkpoint of the signer's vouches for`))
    expect(auditRows().length).toBe(rowsBefore)
    expect(recordedCheckpoint()).toEqual(before)

    const done = await reanchor('--yes')
    expect(done.out).toMatch(/written: audit_reanchored at seq \d+, 4 late signature event\(s\), checkpoint at seq \d+, recorded in signer.db/)
    expect(done.out).toMatch(/audit chain OK/)
    expect(done.code).toBe(0)

    const rows = auditRows()
    const marker = rows.find((r) => r.event === 'audit_reanchored')!
    expect(marker.seq).toBe(backupHead + 1)
    expect(marker.data).toMatchObject({
      previousCheckpoint: before,
      lateSignatures: 4,
      problems: { truncated: 1, unaudited_signature: 4 },
      unsealedRows: { from: backupHead, to: backupHead },
      key: expect.any(String),
      signature: expect.any(String),
    })
    for (const txHash of [...lost, ...during]) {
      const event = rows.find((r) => r.event === 'signature_created' && r.data.txHash === txHash)!
      expect(event.data).toMatchObject({ late: true, signerAddress: WALLET.toLowerCase() })
      expect(event.seq).toBeGreaterThan(marker.seq)
    }
    const sealedBy = rows.at(-1)!
    expect(sealedBy.event).toBe('checkpoint')
    expect(recordedCheckpoint()!.seq).toBe(sealedBy.seq)
    const passed = await verify()
    expect(passed.code).toBe(0)
    // Passing, and saying that the log was once cut.
    expect(passed.out).toMatch(new RegExp(`; re-anchored by an operator once, the last at seq ${marker.seq} `))

    // The signer seals again from the new anchor, and a run of the command now has nothing to do.
    await stack.startSigner()
    expect(stack.signer.output()).not.toMatch(/AUDIT LOG TAMPERED/)
    await sign(1)
    const ok = await verify()
    expect(ok.out).toMatch(/^audit chain OK: \d+ events, \d+ signed checkpoints/)
    await stack.signer.stop()
    const again = await reanchor('--yes')
    expect(again).toEqual({ code: 0, out: expect.stringMatching(/nothing to re-anchor/) })
  }, 120_000)

  it('refuses a log whose rows were changed in place, and writes nothing', async () => {
    await sign(1)
    await stack.signer.stop()
    const recorded = recordedCheckpoint()
    const raw = new Database(file('audit.db'))
    const target = raw.prepare<[], { seq: number; data: string }>("SELECT seq, data FROM audit_events WHERE event = 'signature_created' ORDER BY seq DESC LIMIT 1").get()!
    const trigger = raw.prepare<[], { sql: string }>("SELECT sql FROM sqlite_master WHERE name = 'audit_events_no_update'").get()!.sql
    // A nonce rewritten, hashes left as they were.
    raw.exec('DROP TRIGGER audit_events_no_update')
    raw.prepare('UPDATE audit_events SET data = ? WHERE seq = ?').run(target.data.replace(/"nonce":\d+/, '"nonce":77777'), target.seq)
    raw.exec(trigger)
    raw.close()
    const rowsBefore = auditRows().length

    const refused = await reanchor('--yes')
    expect(refused.code).toBe(1)
    expect(refused.out).toMatch(/refused: \d+ broken_row.*Restore audit.db from a backup/s)
    expect(auditRows().length).toBe(rowsBefore)
    expect(recordedCheckpoint()).toEqual(recorded)
  }, 60_000)
})

/** The seq of the first row after `seq` named `event`. */
const firstAfter = (seq: number, event: string) => auditRows().find((r) => r.seq > seq && r.event === event)!.seq

describe('what a writer of audit.db cannot get sealed through a re-anchor (review)', () => {
  it('rows the signer had sealed, rewritten with every hash recomputed and the checkpoints after them cut, are refused', async () => {
    // Another process's event, sealed by the checkpoint of the signature after it.
    await appendAsApprover()
    await sign(2)
    await stack.signer.stop()
    const granted = auditRows().find((r) => r.event === 'approval_granted')!.seq
    const sealedBy = firstAfter(granted, 'checkpoint')
    rewriteAuditRow(file('audit.db'), granted, (d) => ({ ...d, approver: 'mallory', amountWei: '999999999' }))
    tamperAudit(file('audit.db'), (db) => db.prepare('DELETE FROM audit_events WHERE seq >= ?').run(sealedBy))
    const recorded = recordedCheckpoint()
    const rowsBefore = auditRows().length

    // Before: "written: audit_reanchored …", and verify passed over approver mallory.
    const refused = await reanchor('--yes')
    expect(refused.code).toBe(1)
    expect(refused.out).toMatch(new RegExp(`refused: row ${sealedBy - 1} is not the row the signer sealed at that seq`))
    expect(auditRows().length).toBe(rowsBefore)
    expect(recordedCheckpoint()).toEqual(recorded)
    expect((await verify()).code).toBe(1)
  }, 60_000)

  it('after an upgrade (a signer.db with no checkpoint history), the first start fills it from audit.db, and a stripped rewrite is still refused', async () => {
    await appendAsApprover()
    await sign(3)
    await stack.signer.stop()
    // signer.db as the version before kept it: the latest checkpoint only.
    const sdb = new Database(file('signer.db'))
    sdb.exec('DROP TABLE audit_checkpoint_history')
    sdb.close()
    await stack.startSigner()
    expect(stack.signer.output()).toMatch(/audit checkpoint history filled from the checkpoints in audit.db .*"checkpoints":4/)
    await stack.signer.stop()
    const granted = auditRows().find((r) => r.event === 'approval_granted')!.seq
    rewriteAuditRow(file('audit.db'), granted, (d) => ({ ...d, approver: 'mallory', amountWei: '999999999' }))
    stripCheckpoints(file('audit.db'))
    // Before: "written: audit_reanchored …" and verify passed (review).
    const refused = await reanchor('--yes')
    expect(refused.code).toBe(1)
    expect(refused.out).toMatch(/refused: row \d+ is not the row the signer sealed at that seq/)
  }, 60_000)

  it('a log with every checkpoint stripped out (renumbered and re-hashed) is refused', async () => {
    await sign(3)
    await stack.signer.stop()
    stripCheckpoints(file('audit.db'))
    const refused = await reanchor('--yes')
    expect(refused.code).toBe(1)
    expect(refused.out).toMatch(/refused: row \d+ is not the row the signer sealed at that seq/)
    expect(auditRows().some((r) => r.event === 'audit_reanchored')).toBe(false)
  }, 60_000)

  it('a signature event rewritten before a seal is refused, not written again beside the rewrite', async () => {
    await sign(2)
    await stack.signer.stop()
    const target = auditRows().find((r) => r.event === 'signature_created')!
    // Rewritten with its hashes recomputed, then the log cut before the checkpoint that sealed it.
    rewriteAuditRow(file('audit.db'), target.seq, (d) => ({ ...d, nonce: 4242 }))
    tamperAudit(file('audit.db'), (db) => db.prepare('DELETE FROM audit_events WHERE seq > ?').run(target.seq))
    const refused = await reanchor('--yes')
    expect(refused.code).toBe(1)
    expect(refused.out).toMatch(/refused: 1 signature event\(s\) in the log disagree with signer.db/)
    expect(auditRows().some((r) => r.event === 'audit_reanchored')).toBe(false)
  }, 60_000)

  it('an audit_reanchored row put into the file directly is reported by verify, not counted as an operator re-anchor', async () => {
    await sign(1)
    await stack.signer.stop()
    const head = auditRows().at(-1)!.seq
    const forged = { previousCheckpoint: null, logHead: { seq: head, hash: '0x' }, problems: {}, lateSignatures: 0, unsealedRows: null, key: 'x', signature: 'x', intentId: 'system' }
    tamperAudit(
      file('audit.db'),
      (db) =>
        db
          .prepare("INSERT INTO audit_events (seq, id, timestamp, intent_id, event, data, prev_hash, hash) VALUES (?, 'forged', ?, 'system', 'audit_reanchored', ?, '', '')")
          .run(head + 1, Date.now(), canonicalize(forged)),
      head + 1,
    )
    const result = await verify()
    expect(result.code).toBe(1)
    expect(result.out).toMatch(new RegExp(`audit chain BROKEN at seq ${head + 1} \\(bad checkpoint signature\\): this audit_reanchored row is not one the signer wrote`))
    expect(result.out).not.toMatch(/re-anchored by an operator/)
  }, 60_000)

  it('files it cannot read are named in a sentence, not a stack trace', async () => {
    await stack.signer.stop()
    rmSync(file('audit-key.pub'))
    const noKey = await reanchor('--yes')
    expect(noKey.code).toBe(1)
    expect(noKey.out).toMatch(/the audit key's public half is not at .*audit-key\.pub/)
    await stack.startSigner() // writes audit-key.pub again
    await stack.signer.stop()
    for (const suffix of ['', '-wal', '-shm']) rmSync(file(`audit.db${suffix}`), { force: true })
    writeFileSync(file('audit.db'), '')
    const empty = await reanchor('--yes')
    expect(empty.code).toBe(1)
    expect(empty.out).toMatch(/audit\.db cannot be read as countersign's audit log \(no such table: audit_events\)/)
    expect(empty.out).not.toMatch(/\n\s+at /)
  }, 60_000)
})
