import { randomUUID } from 'node:crypto'
import { canonicalize } from '../canonical/jcs.js'
import type { AuditEvent, Clock } from '../types.js'
import { AuditDataError, assertPlainJson } from './plainJson.js'
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

/**
 * Validates and stamps one event before it joins a batch, so an event that
 * cannot be stored fails alone and early. The stored data always carries
 * `intentId` (SPEC: "data: intentId plus event-specific fields"); it is
 * canonicalised here, once, and the writer stores and hashes that string.
 */
export function prepareEvent(input: AuditAppend, clock: Clock): { event: AuditEvent; prepared: PreparedEvent } {
  const { intentId, event, data } = input
  if (typeof event !== 'string' || event === '') throw new AuditDataError('audit event name must be a non-empty string')
  if (typeof intentId !== 'string' || intentId === '') throw new AuditDataError(`audit event ${event}: intentId must be a non-empty string`)
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new AuditDataError(`audit event ${event}: data must be a plain object (an array or primitive is not accepted)`)
  }
  const stored = { ...data, intentId }
  try {
    assertPlainJson(stored, 'data')
  } catch (err) {
    throw new AuditDataError(`audit event ${event}: ${(err as Error).message}`)
  }
  const dataJcs = canonicalize(stored)
  const timestamp = clock()
  if (!Number.isSafeInteger(timestamp) || Math.abs(timestamp) > 8.64e15) throw new AuditDataError(`audit clock returned ${timestamp}, not integer Unix milliseconds a Date can hold`)
  const full: AuditEvent = { id: randomUUID(), timestamp, intentId, event, data: stored }
  return { event: full, prepared: { id: full.id, timestamp, intentId, event, dataJcs } }
}
