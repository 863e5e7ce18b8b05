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
import { copyFileSync, rmSync } from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTransaction, createRpcClient, defaultRouterTable, SIGNER_SOCKET, type SignResult } from '@countersign/shared'
import type { Address } from 'viem'
import { anvilAccounts } from './support/anvil.js'
import { BOB, intentFor } from './support/intents.js'
import { repoRoot } from './support/processes.js'
import { importKey, Stack } from './support/stack.js'

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

beforeAll(async () => {
  stack = new Stack({ policy: { maxTxPerHour: 100_000, requireApprovalAbove: { valueWei: '1000000000000000000000' } } })
  expect(await importKey(stack.dataDir, owner.privateKey)).toBe(WALLET)
  await stack.startSigner()
}, 120_000)

afterAll(async () => {
  await stack?.stop()
})

describe('audit.db restored from an older backup', () => {
  it('the signer starts and signs with the seal refused; the operator re-anchors it; verify passes and the signer seals again', async () => {
    await sign(2)
    const backup = path.join(stack.dataDir, 'audit-backup.db')
    // SQLite's online backup, as docs/operations.md has it, while the signer runs.
    const live = new Database(file('audit.db'), { readonly: true })
    await live.backup(backup)
    live.close()
    const lost = await sign(3)
    await stack.signer.stop()
    const before = recordedCheckpoint()!

    for (const suffix of ['-wal', '-shm']) rmSync(file(`audit.db${suffix}`), { force: true })
    copyFileSync(backup, file('audit.db'))
    expect(auditRows().at(-1)!.seq).toBeLessThan(before.seq)

    // Before: "countersign signer: CheckpointRefusedError: audit checkpoint refused: the row at seq N … is gone", exit 1.
    await stack.startSigner()
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
    const rowsBefore = auditRows().length
    const dry = await reanchor()
    expect(dry.code).toBe(1)
    expect(dry.out).toMatch(/plan: take the log as it stands .* write audit_reanchored, 3 signature event\(s\) the log lost/)
    expect(dry.out).toMatch(/nothing written: run again with --yes/)
    // The rows the signer never sealed (the one signature made over the restored log) are named before anything is written.
    expect(dry.out).toMatch(/rows \d+ to \d+ come after the log's last checkpoint: no checkpoint vouches for them/)
    expect(auditRows().length).toBe(rowsBefore)
    expect(recordedCheckpoint()).toEqual(before)

    const done = await reanchor('--yes')
    expect(done.out).toMatch(/written: audit_reanchored at seq \d+, 3 late signature event\(s\), checkpoint at seq \d+, recorded in signer.db/)
    expect(done.out).toMatch(/audit chain OK/)
    expect(done.code).toBe(0)

    const rows = auditRows()
    const marker = rows.find((r) => r.event === 'audit_reanchored')!
    const duringSeq = rows.find((r) => r.event === 'signature_created' && r.data.txHash === during[0])!.seq
    expect(marker.data).toMatchObject({
      previousCheckpoint: before,
      lateSignatures: 3,
      problems: { truncated: 1, unaudited_signature: 3, signature_not_sealed: 1 },
      unsealedRows: { from: expect.any(Number), to: marker.seq - 1 },
    })
    const unsealed = marker.data.unsealedRows as { from: number; to: number }
    expect(unsealed.from).toBeLessThanOrEqual(duringSeq)
    expect(rows.slice(0, unsealed.from - 1).at(-1)!.event).toBe('checkpoint')
    for (const txHash of lost) {
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
    await stack.startSigner()
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
