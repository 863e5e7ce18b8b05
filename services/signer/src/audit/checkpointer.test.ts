import { randomUUID } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { CheckpointRefusedError, auditRowHashFromJcs, systemClock, type AuditLog } from '@countersign/shared'
import { verifyAuditChain } from '@countersign/shared/server'
import { rewriteAuditRow, stripCheckpoints, tamperAudit } from '@countersign/shared/testing/auditTamper'
import type { AuditCheckpoints } from '../store/auditCheckpoints.js'
import { openSignerDb } from '../store/signerDb.js'
import { CHECKPOINT_POLL_MS, startCheckpointTimer } from './checkpointer.js'
import { openSignerAudit } from './signerAudit.js'

describe('startCheckpointTimer', () => {
  it('a head read that throws (audit.db changed by hand, unreadable) is reported and retried; the next good poll checkpoints', async () => {
    let broken = true
    let checkpoints = 0
    const audit = {
      head: () => {
        if (broken) throw new Error('no such table: audit_events')
        return { seq: 5, hash: `0x${'11'.repeat(32)}` }
      },
      checkpoint: async () => {
        checkpoints += 1
        return { seq: 6, hash: `0x${'22'.repeat(32)}`, sealed: { seq: 5, hash: `0x${'11'.repeat(32)}` } }
      },
    } as unknown as AuditLog
    const store = { latest: () => null } as unknown as AuditCheckpoints
    const errors: string[] = []
    const stop = startCheckpointTimer(audit, store, () => 1_000, (err) => errors.push(err.message))
    try {
      await new Promise((r) => setTimeout(r, CHECKPOINT_POLL_MS * 2 + 100))
      expect(errors.length).toBeGreaterThanOrEqual(1)
      expect(new Set(errors)).toEqual(new Set(['no such table: audit_events']))
      expect(checkpoints).toBe(0)
      broken = false
      for (let i = 0; i < 100 && checkpoints === 0; i++) await new Promise((r) => setTimeout(r, 20))
      expect(checkpoints).toBe(1)
    } finally {
      stop()
    }
  })
})

describe("the signer's checkpoints over a log rewritten under it", () => {
  it('are refused (reported once, however often the timer retries); signer.db keeps the last good one; events are still written', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'cs-signer-cp-'))
    const { db } = openSignerDb(path.join(dir, 'signer.db'))
    const errors: string[] = []
    const { audit, checkpoints } = openSignerAudit(dir, db, systemClock, (err) => errors.push(err.message))
    try {
      for (let i = 0; i < 4; i++) await audit.append({ intentId: `i-${i}`, event: 'policy_evaluated', data: { i } })
      await audit.checkpoint()
      const good = checkpoints.latest()!
      rewriteAuditRow(path.join(dir, 'audit.db'), 2, (d) => ({ ...d, approved: false }))
      stripCheckpoints(path.join(dir, 'audit.db'))
      await audit.append({ intentId: 'i-late', event: 'policy_evaluated', data: {} })
      const stop = startCheckpointTimer(audit, checkpoints, systemClock, (err) => errors.push(err.message))
      try {
        await new Promise((r) => setTimeout(r, CHECKPOINT_POLL_MS * 3 + 200))
      } finally {
        stop()
      }
      await expect(audit.append({ intentId: 'i-sig', event: 'signature_created', data: {} }, { checkpoint: true })).rejects.toThrow(CheckpointRefusedError)
      expect(errors).toEqual([
        `audit.db was changed outside countersign: the row at seq ${good.seq}, the last checkpoint the signer wrote, no longer has the hash it recorded. No checkpoint is signed over it (events and signatures are still written; countersign-audit verify holds each signature in signer.db against the log); run countersign-audit verify on the signer's data directory; with every service stopped, put audit.db back from a backup if rows were cut or rewritten, and run countersign-signer audit-reanchor before starting them`,
      ])
      expect(checkpoints.latest()).toEqual(good)
      expect(audit.list({ limit: 3 }).map((e) => e.event)).toEqual(['signature_created', 'policy_evaluated', 'policy_evaluated'])
    } finally {
      await audit.close()
      db.close()
    }
  })
})

describe('a checkpoint committed while the one before it is still being fsynced', () => {
  // Found by review: the sealer checked the chain from the last checkpoint signer.db had recorded, which it
  // records only after that checkpoint's fsync. A second signature committed meanwhile (grouped fsync: the
  // normal case under load) was sealed against the one before, so another writer of audit.db that deleted the
  // first signature's row and its checkpoint in that moment (and appended filler, hashed as countersign does)
  // had the second checkpoint sealed over it; signer.db then moved past the deleted one and verify passed.
  it('is checked from the one written just before it: the erased signature stops the seal, and verify reports it', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'cs-signer-race-'))
    const file = path.join(dir, 'audit.db')
    const { db } = openSignerDb(path.join(dir, 'signer.db'))
    const errors: string[] = []
    const { audit, checkpoints, key } = openSignerAudit(dir, db, systemClock, (err) => errors.push(err.message))
    try {
      await audit.append({ intentId: 'system', event: 'before', data: {} }, { checkpoint: true })
      const first = checkpoints.latest()!
      const signedA = audit.append({ intentId: 'intent-a', event: 'signature_created', data: { nonce: 7 } }, { checkpoint: true })
      // Right after A's commit, before its fsync is done: the rewrite, then signature B.
      const signedB = new Promise<unknown>((resolve, reject) =>
        setImmediate(() => {
          try {
            tamperAudit(file, (other) => {
              other.prepare('DELETE FROM audit_events WHERE seq > ?').run(first.seq)
              for (let i = 0; i < 3; i++) {
                const last = other.prepare<[], { seq: number; hash: string }>('SELECT seq, hash FROM audit_events ORDER BY seq DESC LIMIT 1').get()!
                const row = { seq: last.seq + 1, id: randomUUID(), timestamp: Date.now(), intentId: 'system', event: 'heartbeat', dataJcs: '{}', prevHash: last.hash }
                other.prepare('INSERT INTO audit_events VALUES (?,?,?,?,?,?,?,?)').run(row.seq, row.id, row.timestamp, row.intentId, row.event, row.dataJcs, row.prevHash, auditRowHashFromJcs(row))
              }
            })
            audit.append({ intentId: 'intent-b', event: 'signature_created', data: { nonce: 8 } }, { checkpoint: true }).then(resolve, reject)
          } catch (err) {
            reject(err)
          }
        }),
      )
      await signedA
      // B's event is written but its append is refused: the signer would not hand B out.
      await expect(signedB).rejects.toThrow(CheckpointRefusedError)
      // The second checkpoint was refused: nothing sealed over the rewrite, and signer.db names A's checkpoint.
      expect(errors).toEqual([expect.stringMatching(/^audit\.db was changed outside countersign: the row at seq 4, the last checkpoint the signer wrote, no longer has the hash it recorded\. No checkpoint is signed over it/)])
      expect(checkpoints.latest()!.seq).toBe(4)
      expect(verifyAuditChain(file, { publicKey: key.publicKey, latest: checkpoints.latest() })).toMatchObject({ ok: false })
    } finally {
      await audit.close()
      db.close()
    }
  })
})
