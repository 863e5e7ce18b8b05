import { CheckpointRefusedError, signCheckpoint, type AuditCheckpointer, type AuditLog, type Clock } from '@countersign/shared'
import type { AuditCheckpoints } from '../store/auditCheckpoints.js'
import type { AuditKey } from './auditKey.js'

/**
 * Signs checkpoints with the audit key and records each written one in
 * signer.db. A failed record leaves signer.db at the previous checkpoint (the
 * log is then anchored a little less far) and is reported; the next
 * checkpoint records again.
 *
 * A new checkpoint is signed only over a log that still continues from the
 * last one recorded (AuditCheckpointer.anchor): a log rewritten under it gets
 * no signature, its events are still written (signatures too: see
 * signerCore's unsealedIsWritten), and the refusal is reported
 * once per reason (the poll retries every 500 ms) until the log is restored.
 */
export function createCheckpointer(key: AuditKey, store: AuditCheckpoints, clock: Clock, onError: (err: Error) => void): AuditCheckpointer {
  let lastRefusal: string | null = null
  return {
    sign: (head) => ({ key: key.fingerprint, signature: signCheckpoint(key.privateKey, head.seq, head.hash) }),
    written: (cp) => {
      lastRefusal = null
      try {
        store.record(cp, clock())
      } catch (err) {
        onError(err as Error)
      }
    },
    anchor: () => {
      const latest = store.latest()
      return latest && { seq: latest.seq, hash: latest.hash }
    },
    refused: (why) => {
      if (why === lastRefusal) return
      lastRefusal = why
      onError(
        new CheckpointRefusedError(
          `audit.db was changed outside countersign: ${why}. No checkpoint is signed over it (events and signatures are still written; countersign-audit verify holds each signature in signer.db against the log); run countersign-audit verify on the signer's data directory; with every service stopped, put audit.db back from a backup if rows were cut or rewritten, and run countersign-signer audit-reanchor before starting them`,
        ),
      )
    },
  }
}

/** DESIGN §6: a checkpoint at least every 100 events or every 10 s while the log grows. */
export const CHECKPOINT_EVERY_EVENTS = 100
export const CHECKPOINT_EVERY_MS = 10_000
/** How often the signer looks at the log's head (one indexed read). */
export const CHECKPOINT_POLL_MS = 500

/**
 * Whether the log has grown enough since the last checkpoint to need one:
 * 100 events after it, or any event after it once 10 s have passed.
 */
export function checkpointDue(headSeq: number, last: { seq: number; writtenAt: number } | null, nowMs: number): boolean {
  if (!last) return headSeq > 0
  const after = headSeq - last.seq
  return after >= CHECKPOINT_EVERY_EVENTS || (after > 0 && nowMs - last.writtenAt >= CHECKPOINT_EVERY_MS)
}

/**
 * Polls the log's head and appends a checkpoint when one is due: the other
 * processes append without the key, so the signer seals their events too.
 * Returns a stop function. A failed checkpoint is reported and retried at
 * the next poll.
 */
export function startCheckpointTimer(audit: AuditLog, store: AuditCheckpoints, clock: Clock, onError: (err: Error) => void): () => void {
  let busy = false
  const timer = setInterval(() => {
    if (busy) return
    // A read that throws (audit.db or signer.db unreadable, locked or changed by hand) is reported and
    // retried at the next poll: thrown from the timer it would end the signer.
    let due: boolean
    try {
      due = checkpointDue(audit.head().seq, store.latest(), clock())
    } catch (err) {
      onError(err as Error)
      return
    }
    if (!due) return
    busy = true
    audit.checkpoint().then(
      () => (busy = false),
      (err: Error) => {
        busy = false
        // A refusal was reported by the checkpointer itself, once.
        if (!(err instanceof CheckpointRefusedError)) onError(err)
      },
    )
  }, CHECKPOINT_POLL_MS)
  timer.unref()
  return () => clearInterval(timer)
}
