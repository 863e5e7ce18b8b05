import Database from 'better-sqlite3'
import { AuditReadError, auditRowProblem, createAuditTableWatch, makePrivateFile, type AuditEventRow } from '@countersign/shared'
import { SOURCE_AUDIT_EVENTS, webhookEventOf } from './webhookEvents.js'

export type DeliveryStatus = 'pending' | 'delivered' | 'failed'

/** One webhook delivery as the dashboard lists it (no body, no secret). */
export interface DeliveryView {
  id: string
  type: string
  intentId: string
  status: DeliveryStatus
  attempts: number
  createdAt: number
  nextAttemptAt: number | null
  lastError: string | null
  deliveredAt: number | null
}

export interface Delivery {
  seq: number
  id: string
  body: string
  attempts: number
  createdAt: number
  nextAttemptAt: number
}

interface DeliveryRow {
  seq: number
  id: string
  type: string
  intent_id: string
  body: string
  status: DeliveryStatus
  attempts: number
  created_at: number
  next_attempt_at: number
  last_error: string | null
  delivered_at: number | null
}

/** At most this many audit rows are read per pull, so one pull never holds the thread for long. */
const PULL_BATCH = 1_000

/**
 * The webhook outbox (webhooks.db, 0600): one row per webhook event, keyed by
 * the audit seq it came from, and the audit seq read so far. Rows and the
 * cursor move in one transaction, so a crash or restart neither loses an
 * event nor queues one twice; events written while the approver was down are
 * read from audit.db when it is back.
 */
export class WebhookOutbox {
  private readonly db: Database.Database
  private readonly audit: Database.Database
  /** Reads audit.db in one read transaction, after checking its table is still countersign's. */
  private readonly readAudit: <T>(rows: () => T) => T

  constructor(file: string, auditFile: string) {
    makePrivateFile(file)
    this.db = new Database(file)
    this.db.pragma('journal_mode = WAL')
    this.db.pragma('synchronous = FULL')
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS deliveries (
        seq             INTEGER PRIMARY KEY,
        id              TEXT    NOT NULL,
        type            TEXT    NOT NULL,
        intent_id       TEXT    NOT NULL,
        body            TEXT    NOT NULL,
        status          TEXT    NOT NULL,
        attempts        INTEGER NOT NULL DEFAULT 0,
        created_at      INTEGER NOT NULL,
        next_attempt_at INTEGER NOT NULL,
        last_error      TEXT,
        delivered_at    INTEGER
      );
      CREATE INDEX IF NOT EXISTS deliveries_pending ON deliveries (status, seq);
      CREATE TABLE IF NOT EXISTS outbox_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
    `)
    makePrivateFile(file)
    this.audit = new Database(auditFile, { readonly: true, fileMustExist: true })
    this.audit.pragma('busy_timeout = 5000')
    const tableUnchanged = createAuditTableWatch(
      this.audit,
      (problem) => new AuditReadError(`audit.db is not read for webhooks any more: ${problem}; it was changed outside countersign (countersign-audit verify --db names what changed)`),
    )
    // Only countersign's own table is read: a view put in its place may never return (createAuditTableWatch).
    this.readAudit = (rows) =>
      this.audit.transaction(() => {
        tableUnchanged()
        return rows()
      })()
    // The first start begins at the log's head: a webhook configured today does not replay last year.
    const head = this.readAudit(() => (this.audit.prepare('SELECT COALESCE(MAX(seq), 0) AS seq FROM audit_events').get() as { seq: number }).seq)
    this.db.prepare('INSERT OR IGNORE INTO outbox_meta (key, value) VALUES (?, ?)').run('audit_cursor', head)
  }

  private cursor(): number {
    return (this.db.prepare("SELECT value FROM outbox_meta WHERE key = 'audit_cursor'").get() as { value: number }).value
  }

  /**
   * Queues the webhook events the audit log gained since the last pull;
   * returns how many. A row no append could have written (inserted into
   * audit.db by hand) is not sent: `skipped` hears which and why, and the
   * rows after it still go out.
   */
  pull(now: number, skipped?: (problem: string) => void): number {
    const from = this.cursor()
    const rows = this.readAudit(() =>
      this.audit.prepare<[number, number], AuditEventRow>('SELECT seq, id, timestamp, intent_id, event, data FROM audit_events WHERE seq > ? ORDER BY seq LIMIT ?').all(from, PULL_BATCH),
    )
    if (rows.length === 0) return 0
    const insert = this.db.prepare(
      "INSERT OR IGNORE INTO deliveries (seq, id, type, intent_id, body, status, created_at, next_attempt_at) VALUES (?, ?, ?, ?, ?, 'pending', ?, ?)",
    )
    const setCursor = this.db.prepare("UPDATE outbox_meta SET value = ? WHERE key = 'audit_cursor'")
    let queued = 0
    this.db.transaction(() => {
      for (const row of rows) {
        if (!SOURCE_AUDIT_EVENTS.includes(row.event)) continue
        const problem = auditRowProblem(row)
        if (problem !== null) {
          skipped?.(problem)
          continue
        }
        // One row that cannot be made into a delivery is skipped, never the whole pull: a throw here rolled
        // back the cursor, and every pull after it stopped at the same row, so no webhook went out again.
        let body: { event: NonNullable<ReturnType<typeof webhookEventOf>>; json: string } | null
        try {
          const event = webhookEventOf(row)
          body = event ? { event, json: JSON.stringify(event) } : null
        } catch (err) {
          skipped?.(`audit.db row ${row.seq} (${row.event}) cannot be sent as a webhook: ${(err as Error).message}`)
          continue
        }
        if (!body) continue
        insert.run(row.seq, body.event.id, body.event.type, body.event.intentId, body.json, now, now)
        queued += 1
      }
      setCursor.run(rows.at(-1)!.seq)
    })()
    return queued
  }

  /** The oldest delivery not yet done: deliveries go out in order, so it holds back the ones after it. */
  head(): Delivery | undefined {
    const r = this.db.prepare<[], DeliveryRow>("SELECT * FROM deliveries WHERE status = 'pending' ORDER BY seq LIMIT 1").get()
    return r && { seq: r.seq, id: r.id, body: r.body, attempts: r.attempts, createdAt: r.created_at, nextAttemptAt: r.next_attempt_at }
  }

  delivered(seq: number, now: number): void {
    this.db.prepare("UPDATE deliveries SET status = 'delivered', attempts = attempts + 1, delivered_at = ?, last_error = NULL WHERE seq = ?").run(now, seq)
  }

  /** A failed attempt: tried again at `retryAt`, or given up for good when null. */
  attemptFailed(seq: number, error: string, retryAt: number | null): void {
    this.db
      .prepare('UPDATE deliveries SET attempts = attempts + 1, last_error = ?, status = ?, next_attempt_at = ? WHERE seq = ?')
      .run(error.slice(0, 300), retryAt === null ? 'failed' : 'pending', retryAt ?? 0, seq)
  }

  /** Newest first, for the dashboard. */
  list(limit: number): DeliveryView[] {
    return this.db
      .prepare<[number], DeliveryRow>('SELECT * FROM deliveries ORDER BY seq DESC LIMIT ?')
      .all(limit)
      .map((r) => ({
        id: r.id,
        type: r.type,
        intentId: r.intent_id,
        status: r.status,
        attempts: r.attempts,
        createdAt: r.created_at,
        nextAttemptAt: r.status === 'pending' ? r.next_attempt_at : null,
        lastError: r.last_error,
        deliveredAt: r.delivered_at,
      }))
  }

  close(): void {
    this.audit.close()
    this.db.close()
  }
}
