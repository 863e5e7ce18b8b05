import { mkdtempSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { canonicalize } from '../canonical/jcs.js'
import { openAuditLog } from './auditLog.js'
import { CHECKPOINT_EVENT, REANCHOR_EVENT } from './checkpoint.js'
import { AuditDataError } from './plainJson.js'
import { prepareCheckpointEvent, prepareEvent, prepareReanchorEvent } from './prepareEvent.js'

const clock = () => 1_795_000_000_000
/** What the review appended to blind verify: a row named checkpoint that the signer never signed. */
const bogus = { intentId: 'system', event: CHECKPOINT_EVENT, data: { seq: 0, headHash: '0x', key: 'x', signature: 'x' } }

describe('the event name audit_reanchored is reserved for the signer\'s re-anchor command', () => {
  it('prepareEvent refuses it (verify reports each one as a re-anchor); prepareReanchorEvent makes it, under system', async () => {
    const forged = { intentId: 'system', event: REANCHOR_EVENT, data: { previousCheckpoint: null, logHead: { seq: 1, hash: '0x' }, problems: {}, lateSignatures: 0, unsealedRows: null, key: 'k', signature: 's' } }
    expect(() => prepareEvent(forged, clock)).toThrow("audit event name audit_reanchored is reserved for the signer's audit-reanchor command")
    const dir = mkdtempSync(path.join(os.tmpdir(), 'cs-reserved-'))
    const log = openAuditLog(path.join(dir, 'audit.db'))
    try {
      await expect(log.append(forged)).rejects.toThrow(AuditDataError)
    } finally {
      await log.close()
    }
    const made = prepareReanchorEvent(forged.data, clock)
    expect(made.event).toMatchObject({ intentId: 'system', event: REANCHOR_EVENT, data: { ...forged.data, intentId: 'system' } })
  })
})

describe('the event name checkpoint is reserved for the sealer', () => {
  it('prepareEvent refuses it, in words', () => {
    expect(() => prepareEvent(bogus, clock)).toThrow(AuditDataError)
    expect(() => prepareEvent(bogus, clock)).toThrow("audit event name checkpoint is reserved for the signer's signed checkpoints")
    // Other names, checkpoint-like data included, are appended as before.
    expect(prepareEvent({ ...bogus, event: 'checkpoint_requested' }, clock).event.event).toBe('checkpoint_requested')
  })

  it('append, appendOrdered and appendSync refuse it and write nothing', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'cs-reserved-'))
    const log = openAuditLog(path.join(dir, 'audit.db'))
    try {
      await expect(log.append(bogus)).rejects.toThrow(AuditDataError)
      const ordered = log.appendOrdered(bogus)
      await expect(ordered.durable).rejects.toThrow(AuditDataError)
      await expect(ordered.ordered).rejects.toThrow(AuditDataError)
      expect(() => log.appendSync(bogus)).toThrow(AuditDataError)
      expect(log.head().seq).toBe(0)
    } finally {
      await log.close()
    }
  })

  it("prepareCheckpointEvent makes the sealer's event: named checkpoint, intentId system, the checkpoint's fields as canonical JSON", () => {
    const checkpoint = { seq: 4, headHash: `0x${'ab'.repeat(32)}`, key: 'f'.repeat(32), signature: 'c2ln' }
    const { event, prepared } = prepareCheckpointEvent(checkpoint, clock)
    expect(event).toMatchObject({ event: CHECKPOINT_EVENT, intentId: 'system', timestamp: clock(), data: { ...checkpoint, intentId: 'system' } })
    expect(prepared).toEqual({ id: event.id, timestamp: clock(), intentId: 'system', event: CHECKPOINT_EVENT, dataJcs: canonicalize({ ...checkpoint, intentId: 'system' }) })
  })
})
