// A grouped writer (the signer, the approver) while another process holds
// audit.db's write lock: all three processes write the file, and a lock
// waited for inside SQLite sleeps on the writer's event loop.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { openAuditLog } from './auditLog.js'
import { AuditWriteError } from './writer.js'

const holders: ChildProcess[] = []
afterEach(() => {
  for (const h of holders.splice(0)) h.kill('SIGKILL')
})

/** Another process that takes the write lock and keeps it until it is told to let go (a line on stdin). */
async function holdWriteLock(file: string): Promise<{ release(): void }> {
  const script = `
    const Database = require('better-sqlite3')
    const db = new Database(${JSON.stringify(file)})
    db.exec('BEGIN IMMEDIATE')
    process.stdout.write('locked\\n')
    process.stdin.once('data', () => { db.exec('COMMIT'); db.close(); process.exit(0) })
  `
  const holder = spawn(process.execPath, ['-e', script], { cwd: process.cwd(), stdio: ['pipe', 'pipe', 'inherit'] })
  holders.push(holder)
  await new Promise<void>((resolve, reject) => {
    holder.stdout!.once('data', () => resolve())
    holder.once('exit', (code) => reject(new Error(`lock holder exited (${code})`)))
  })
  return { release: () => holder.stdin!.write('go\n') }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** The longest the event loop went without running a 5 ms timer, while `during` runs. */
async function longestStall<T>(during: () => Promise<T>): Promise<{ result: PromiseSettledResult<T>; stallMs: number }> {
  let last = performance.now()
  let stallMs = 0
  const beat = setInterval(() => {
    const now = performance.now()
    stallMs = Math.max(stallMs, now - last)
    last = now
  }, 5)
  const [result] = await Promise.allSettled([during()])
  // A stall that ends with the settling itself shows on the next beat.
  await sleep(20)
  clearInterval(beat)
  return { result, stallMs }
}


describe('grouped audit writer and another process’s write lock', () => {
  // Found by review: the signer waited for the lock in SQLite's busy handler, on its event loop; one refusal
  // froze both its sockets for 5 s.
  it('waits off the event loop and writes once the lock is released', async () => {
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'cs-audit-lock-')), 'audit.db')
    const log = openAuditLog(file, { fsync: 'grouped' })
    await log.append({ intentId: 'system', event: 'started', data: {} })
    const lock = await holdWriteLock(file)
    const { result, stallMs } = await longestStall(async () => {
      const appended = log.append({ intentId: 'i-1', event: 'signing_denied', data: { reason: 'x' } })
      await sleep(400)
      lock.release()
      return appended
    })
    expect(result.status).toBe('fulfilled')
    expect(stallMs).toBeLessThan(150)
    expect(log.list({ limit: 10 }).map((e) => e.event)).toEqual(['signing_denied', 'started'])
    await log.close()
  })

  it('gives up after busyTimeoutMs with an AuditWriteError, without freezing the loop meanwhile', async () => {
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'cs-audit-lock-')), 'audit.db')
    const log = openAuditLog(file, { fsync: 'grouped', busyTimeoutMs: 300 })
    await log.append({ intentId: 'system', event: 'started', data: {} })
    const lock = await holdWriteLock(file)
    const started = performance.now()
    const { result, stallMs } = await longestStall(() => log.append({ intentId: 'i-1', event: 'signing_denied', data: { reason: 'x' } }))
    expect(result.status).toBe('rejected')
    expect((result as PromiseRejectedResult).reason).toBeInstanceOf(AuditWriteError)
    expect((result as PromiseRejectedResult).reason.message).toMatch(/audit log write failed \(1 events not recorded\): audit.db stayed locked by another writer for more than 300 ms/)
    expect(performance.now() - started).toBeGreaterThanOrEqual(290)
    expect(stallMs).toBeLessThan(150)
    lock.release()
    // The next append, once the lock is free, goes through.
    await log.append({ intentId: 'i-2', event: 'signing_denied', data: { reason: 'y' } })
    expect(log.list({ limit: 10 }).map((e) => e.intentId)).toEqual(['i-2', 'system'])
    await log.close()
  })

  // Second review: close() called flush() beside the pending retry, and two retry loops polled from then on.
  it('keeps appends in order across retries, and close() while retrying waits on the same loop', async () => {
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'cs-audit-lock-')), 'audit.db')
    const log = openAuditLog(file, { fsync: 'grouped' })
    await log.append({ intentId: 'system', event: 'started', data: {} })
    const lock = await holdWriteLock(file)
    const a = log.append({ intentId: 'a', event: 'signing_denied', data: { reason: 'x' } })
    await sleep(50)
    const b = log.append({ intentId: 'b', event: 'signing_denied', data: { reason: 'x' } })
    const retries = async () => {
      const spy = vi.spyOn(globalThis, 'setTimeout')
      await sleep(150)
      const n = spy.mock.calls.filter(([, ms]) => ms === 10).length
      spy.mockRestore()
      return n
    }
    const before = await retries()
    const closing = log.close()
    const after = await retries()
    expect(before).toBeGreaterThan(3)
    expect(after).toBeLessThan(before * 1.5)
    lock.release()
    await Promise.all([a, b, closing])
    const reopened = openAuditLog(file)
    expect(reopened.list({ limit: 10 }).map((e) => e.intentId)).toEqual(['b', 'a', 'system'])
    await reopened.close()
  })
})
