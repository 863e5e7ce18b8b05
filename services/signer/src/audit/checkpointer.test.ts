import { mkdtempSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { systemClock, type AuditLog } from '@countersign/shared'
import { rewriteAuditRow, stripCheckpoints } from '@countersign/shared/testing/auditTamper'
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
      await audit.append({ intentId: 'i-sig', event: 'signature_created', data: {} }, { checkpoint: true })
      expect(errors).toEqual([
        `audit.db was changed outside countersign: the row at seq ${good.seq}, the last checkpoint the signer recorded, no longer has the hash it recorded. No checkpoint is signed over it (events are still written); run countersign-audit verify on the signer's data directory and restore audit.db from a backup`,
      ])
      expect(checkpoints.latest()).toEqual(good)
      expect(audit.list({ limit: 3 }).map((e) => e.event)).toEqual(['signature_created', 'policy_evaluated', 'policy_evaluated'])
    } finally {
      await audit.close()
      db.close()
    }
  })
})
