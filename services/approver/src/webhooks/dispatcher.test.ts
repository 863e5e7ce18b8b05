import Database from 'better-sqlite3'
import { mkdtempSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { openAuditLog } from '@countersign/shared'
import { insertRawAuditRow } from '@countersign/shared/testing/auditTamper'
import { floodAnswer } from '@countersign/shared/testing/floodAnswer'
import { describe, expect, it } from 'vitest'
import { GIVE_UP_AFTER_MS, nextAttemptAt, startWebhookDispatcher } from './dispatcher.js'
import { WebhookOutbox } from './outbox.js'

describe('nextAttemptAt', () => {
  it('doubles from the base, capped at an hour', () => {
    expect(nextAttemptAt(0, 1, 1000, 500)).toBe(1500)
    expect(nextAttemptAt(0, 2, 1000, 500)).toBe(2000)
    expect(nextAttemptAt(0, 4, 1000, 500)).toBe(5000)
    expect(nextAttemptAt(0, 40, 1000, 500)).toBe(1000 + 60 * 60_000)
  })

  it('gives up once the next attempt would fall after 24 h', () => {
    expect(nextAttemptAt(0, 30, GIVE_UP_AFTER_MS - 60 * 60_000, 5000)).toBe(GIVE_UP_AFTER_MS)
    expect(nextAttemptAt(0, 30, GIVE_UP_AFTER_MS - 60 * 60_000 + 1, 5000)).toBeNull()
  })
})

const sampleEvents = {
  approval_requested: { requestId: 'r1', action: 'transfer', riskScore: 1, mode: 'web' },
  tx_broadcast: { txHash: `0x${'ab'.repeat(32)}`, chainId: 8453 },
}

/** A fresh audit log and its outbox, then `events` appended (the outbox starts at the log's head: they come after it). */
async function outboxWith(events: Array<keyof typeof sampleEvents>) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cs-webhook-'))
  const auditFile = path.join(dir, 'audit.db')
  const audit = openAuditLog(auditFile)
  const outbox = new WebhookOutbox(path.join(dir, 'webhooks.db'), auditFile)
  for (const event of events) await audit.append({ intentId: 'intent-1', event, data: sampleEvents[event] })
  return { audit, outbox, auditFile }
}

/** Stops the dispatcher, closes the outbox and the log, and closes each server with its connections. */
async function shutDown(dispatcher: { stop(): Promise<void> }, outbox: WebhookOutbox, audit: { close(): Promise<void> }, ...servers: Server[]) {
  await dispatcher.stop()
  outbox.close()
  await audit.close()
  for (const s of servers) {
    s.closeAllConnections()
    await new Promise((r) => s.close(r))
  }
}

describe('a receiver that redirects', () => {
  it('fails the attempt, saying so, and the redirect is not followed', async () => {
    const { audit, outbox } = await outboxWith(['approval_requested'])
    let elsewhere = 0
    const other = createServer((_req, res) => {
      elsewhere += 1
      res.end('ok')
    })
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', r))
    const receiver = createServer((_req, res) => {
      res.writeHead(307, { location: `http://127.0.0.1:${(other.address() as AddressInfo).port}/hook` })
      res.end()
    })
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r))
    const dispatcher = startWebhookDispatcher({ outbox, target: { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, secret: 's'.repeat(32), backoffBaseMs: 60_000 }, clock: Date.now, pollMs: 20 })
    try {
      for (let i = 0; i < 200 && outbox.list(10)[0]?.attempts !== 1; i++) await new Promise((r) => setTimeout(r, 25))
      expect(outbox.list(10)).toEqual([expect.objectContaining({ type: 'approval_requested', status: 'pending', attempts: 1, lastError: 'unexpected redirect' })])
      expect(elsewhere).toBe(0)
    } finally {
      await shutDown(dispatcher, outbox, audit, receiver, other)
    }
  })
})

describe('a receiver that answers with an endless body', () => {
  it('is delivered on its status alone: the body is not read, so the approver neither waits for it nor holds it in memory', async () => {
    const { audit, outbox } = await outboxWith(['approval_requested', 'tx_broadcast'])
    let streamed = () => 0
    let requests = 0
    // The first answer is 200 and a body that goes on (as fast as the connection takes it); the second a plain 200.
    const receiver = createServer((req, res) => {
      requests += 1
      req.resume()
      res.writeHead(200, { 'content-type': 'application/octet-stream' })
      if (requests > 1) return void res.end('ok')
      streamed = floodAnswer(res, 256 * 1024 * 1024)
    })
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r))
    const started = Date.now()
    const dispatcher = startWebhookDispatcher({ outbox, target: { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, secret: 's'.repeat(32), backoffBaseMs: 50 }, clock: Date.now, pollMs: 20 })
    try {
      const done = () => outbox.list(10).filter((d) => d.status === 'delivered').length === 2
      for (let i = 0; i < 200 && !done(); i++) await new Promise((r) => setTimeout(r, 25))
      expect(outbox.list(10).map((d) => [d.type, d.status, d.attempts])).toEqual([
        ['tx_broadcast', 'delivered', 1],
        ['approval_requested', 'delivered', 1],
      ])
      expect(Date.now() - started).toBeLessThan(5_000)
      expect(streamed()).toBeLessThan(64 * 1024 * 1024)
    } finally {
      await shutDown(dispatcher, outbox, audit, receiver)
    }
  })
})

describe('a row inserted into audit.db by hand', () => {
  it.each([
    ['data null', { event: 'approval_requested', data: 'null' }],
    ['a text timestamp', { event: 'tx_broadcast', timestamp: 'yesterday', data: '{}' }],
    ['a timestamp past what a Date holds', { event: 'approval_expired', timestamp: 9_000_000_000_000_000, data: '{"requestId":"r"}' }],
    // JSON.parse takes it, JSON.stringify of it overflows the stack: the pull threw, rolled back its cursor, and every pull after stopped there (found by review).
    ['data nested 20,000 levels deep', { event: 'approval_requested', data: `{"intentId":"i-deep","action":${'['.repeat(20_000)}${']'.repeat(20_000)}}` }],
  ])('(%s) is not sent and does not hold back the events after it; the approver is told which row', async (_what, row) => {
    const { audit, outbox, auditFile } = await outboxWith(['approval_requested'])
    const seq = insertRawAuditRow(auditFile, row)
    await audit.append({ intentId: 'intent-2', event: 'tx_broadcast', data: sampleEvents.tx_broadcast })
    const bodies: string[] = []
    const receiver = createServer((req, res) => {
      let body = ''
      req.on('data', (d) => (body += d))
      req.on('end', () => {
        bodies.push(body)
        res.end('ok')
      })
    })
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r))
    const errors: string[] = []
    const dispatcher = startWebhookDispatcher({
      outbox,
      target: { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, secret: 's'.repeat(32), backoffBaseMs: 50 },
      clock: Date.now,
      pollMs: 20,
      onError: (err) => errors.push(err.message),
    })
    try {
      const delivered = () => outbox.list(10).filter((d) => d.status === 'delivered').length === 2
      for (let i = 0; i < 200 && !delivered(); i++) await new Promise((r) => setTimeout(r, 25))
      expect(bodies.map((b) => (JSON.parse(b) as { intentId: string }).intentId)).toEqual(['intent-1', 'intent-2'])
      expect(outbox.list(10).map((d) => [d.type, d.status])).toEqual([
        ['tx_broadcast', 'delivered'],
        ['approval_requested', 'delivered'],
      ])
      expect(errors).toEqual([expect.stringMatching(new RegExp(`^not sent as a webhook: audit\\.db row ${seq} \\(${row.event}\\): .*changed outside countersign`))])
    } finally {
      await shutDown(dispatcher, outbox, audit, receiver)
    }
  })
})

describe('audit_events swapped for a view while the approver runs', () => {
  it('the outbox refuses to read it, in words, instead of never returning (found by review)', async () => {
    const { audit, outbox, auditFile } = await outboxWith(['approval_requested'])
    try {
      expect(outbox.pull(Date.now())).toBe(1)
      const other = new Database(auditFile)
      other.exec(`ALTER TABLE audit_events RENAME TO audit_events_real;
        CREATE VIEW audit_events AS WITH RECURSIVE r(seq) AS (SELECT 1 UNION ALL SELECT seq + 1 FROM r)
        SELECT seq, 'x' AS id, 0 AS timestamp, 'i' AS intent_id, 'approval_requested' AS event, '{}' AS data FROM r;`)
      other.close()
      expect(() => outbox.pull(Date.now())).toThrow(/audit\.db is not read for webhooks any more: audit_events is a view/)
    } finally {
      outbox.close()
      await audit.close().catch(() => undefined)
    }
  })
})
