import type Database from 'better-sqlite3'
import type { Clock } from '@countersign/shared'

/**
 * The times written on signer.db's rows that order one against another: a
 * token's issued_at and a signature's created_at. A replacement takes only a
 * token issued after the signature it replaces; compared as wall-clock
 * milliseconds, a clock stepped back (an NTP step) between the two made a
 * token minted before the first signature look newer than it, and a gateway
 * that called the first transaction lost got a second one signed without a
 * new approval (found by review). Each time given is above every time this
 * database holds or this function gave, and otherwise the wall clock: never
 * behind it, so expiry and rate windows read as before.
 */
export function createRowTimes(db: Database.Database, clock: Clock): () => number {
  const latest = db
    .prepare<[], { t: number | null }>(
      `SELECT max(t) AS t FROM (
         SELECT max(issued_at) AS t FROM approval_tokens
         UNION ALL SELECT max(created_at) FROM signatures
         UNION ALL SELECT max(replaced_at) FROM replaced_signatures)`,
    )
    .get()
  let last = latest?.t ?? Number.MIN_SAFE_INTEGER
  return () => (last = Math.max(clock(), last + 1))
}
