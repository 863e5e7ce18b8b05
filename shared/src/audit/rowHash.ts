import { keccakCanonical } from '../canonical/hash.js'

/** The hash a row stores: every field of the row and the previous row's hash, canonicalised. */
export function auditRowHash(row: {
  seq: number
  id: string
  timestamp: number
  intentId: string
  event: string
  data: unknown
  prevHash: string
}): string {
  return keccakCanonical({
    seq: row.seq,
    id: row.id,
    timestamp: row.timestamp,
    intentId: row.intentId,
    event: row.event,
    data: row.data,
    prevHash: row.prevHash,
  })
}
