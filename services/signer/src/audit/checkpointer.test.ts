import { describe, expect, it } from 'vitest'
import type { AuditLog } from '@countersign/shared'
import type { AuditCheckpoints } from '../store/auditCheckpoints.js'
import { CHECKPOINT_POLL_MS, startCheckpointTimer } from './checkpointer.js'

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
