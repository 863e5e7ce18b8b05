import { keccakCanonical, keccakHex } from '../canonical/hash.js'

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

/**
 * The same hash from the data's canonical JSON, without parsing and
 * re-canonicalising it: JCS orders the row's members data, event, id,
 * intentId, prevHash, seq, timestamp, so the canonical row is this string.
 */
export function auditRowHashFromJcs(row: { seq: number; id: string; timestamp: number; intentId: string; event: string; dataJcs: string; prevHash: string }): string {
  const text =
    `{"data":${row.dataJcs},"event":${JSON.stringify(row.event)},"id":${JSON.stringify(row.id)},` +
    `"intentId":${JSON.stringify(row.intentId)},"prevHash":${JSON.stringify(row.prevHash)},"seq":${row.seq},"timestamp":${row.timestamp}}`
  return keccakHex(text)
}
