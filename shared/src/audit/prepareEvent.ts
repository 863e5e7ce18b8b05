import { randomUUID } from 'node:crypto'
import type { AuditEvent, Clock } from '../types.js'
import { CHECKPOINT_EVENT, CHECKPOINT_INTENT_ID, REANCHOR_EVENT, type CheckpointData, type ReanchorData } from './checkpoint.js'
import { AuditDataError, canonicalPlainJson } from './plainJson.js'
import type { PreparedEvent } from './writer.js'

export interface AuditAppend {
  /** The intent's id, or `system` for events that belong to no transaction. */
  intentId: string
  /** Event name (SPEC "Events"). */
  event: string
  /**
   * Event-specific fields. NEVER key material, passphrases, approval secrets
   * or any other secret: this log is read by operators, printed by
   * `countersign-audit tail`, and can never be edited or deleted.
   */
  data: Record<string, unknown>
}

/** An event validated, stamped and canonicalised: what the caller gets back, and what the writer stores. */
export interface StampedEvent {
  event: AuditEvent
  prepared: PreparedEvent
}

/**
 * Validates and stamps one event before it joins a batch, so an event that
 * cannot be stored fails alone and early. The stored data always carries
 * `intentId` (SPEC: "data: intentId plus event-specific fields"); it is
 * canonicalised here, once, and the writer stores and hashes that string.
 *
 * The event name `checkpoint` is refused: verify reads every row of that name
 * as one of the signer's signed checkpoints, and one written by anyone else
 * (any process can append) would stand in the log as a bad checkpoint. The
 * sealer makes its event with prepareCheckpointEvent. So is
 * `audit_reanchored`: only the signer's `countersign-signer audit-reanchor`
 * writes it (prepareReanchorEvent), always sealed by a checkpoint in the
 * same commit, and no other process may put one in the log that reads as
 * the signer's.
 */
export function prepareEvent(input: AuditAppend, clock: Clock): StampedEvent {
  if (input.event === CHECKPOINT_EVENT) {
    throw new AuditDataError(`audit event name ${CHECKPOINT_EVENT} is reserved for the signer's signed checkpoints: append the event under another name`)
  }
  if (input.event === REANCHOR_EVENT) {
    throw new AuditDataError(`audit event name ${REANCHOR_EVENT} is reserved for the signer's audit-reanchor command: append the event under another name`)
  }
  return stamp(input, clock)
}

/** The signer's record that it re-anchored the log (countersign-signer audit-reanchor); the checkpoint after it seals it. */
export function prepareReanchorEvent(reanchor: ReanchorData, clock: Clock): StampedEvent {
  return stamp({ intentId: CHECKPOINT_INTENT_ID, event: REANCHOR_EVENT, data: { ...reanchor } }, clock)
}

/** The sealer's event (auditLog.ts): a checkpoint row sealing the chain's head, signed with the signer's audit key. */
export function prepareCheckpointEvent(checkpoint: CheckpointData, clock: Clock): StampedEvent {
  return stamp({ intentId: CHECKPOINT_INTENT_ID, event: CHECKPOINT_EVENT, data: { ...checkpoint } }, clock)
}

function stamp(input: AuditAppend, clock: Clock): StampedEvent {
  const { intentId, event, data } = input
  if (typeof event !== 'string' || event === '') throw new AuditDataError('audit event name must be a non-empty string')
  if (typeof intentId !== 'string' || intentId === '') throw new AuditDataError(`audit event ${event}: intentId must be a non-empty string`)
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new AuditDataError(`audit event ${event}: data must be a plain object (an array or primitive is not accepted)`)
  }
  const stored = { ...data, intentId }
  let dataJcs: string
  try {
    dataJcs = canonicalPlainJson(stored, 'data')
  } catch (err) {
    throw new AuditDataError(`audit event ${event}: ${(err as Error).message}`)
  }
  const timestamp = clock()
  if (!Number.isSafeInteger(timestamp) || Math.abs(timestamp) > 8.64e15) throw new AuditDataError(`audit clock returned ${timestamp}, not integer Unix milliseconds a Date can hold`)
  const full: AuditEvent = { id: randomUUID(), timestamp, intentId, event, data: stored }
  return { event: full, prepared: { id: full.id, timestamp, intentId, event, dataJcs } }
}
