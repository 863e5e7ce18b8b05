import { mkdtempSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { openAuditLog, type AuditLog } from '@countersign/shared'
import { createFailedSignIns, describeSignInFailures, recordingRefusals, SIGN_IN_FAILED_EVENT, type SignInFailureSummary } from './failedSignIns.js'
import type { Operators } from './operators.js'

const T0 = Date.UTC(2026, 11, 7, 22)
let now = T0
let audit: AuditLog
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
  now = T0
  audit = openAuditLog(path.join(mkdtempSync(path.join(os.tmpdir(), 'cs-signins-')), 'audit.db'), { clock: () => now })
})
afterEach(async () => {
  vi.useRealTimers()
  await audit.close()
})

const rows = () =>
  audit
    .list({ limit: 100 })
    .filter((e) => e.event === SIGN_IN_FAILED_EVENT)
    .reverse()
    .map((e) => ({ intentId: e.intentId, data: e.data }))

const alice: Operators = { identify: (t) => (t === 'a'.repeat(40) ? { name: 'alice' } : null), named: 1 }

describe('failed operator sign-ins', () => {
  it('the first refusal is a row at once; those within the window are one row at its end; a quiet window writes nothing and the next refusal is again a row at once', async () => {
    const logged: SignInFailureSummary[] = []
    const failures = createFailedSignIns({ audit, clock: () => now, windowMs: 60_000, onRecorded: (s) => logged.push(s) })
    failures.record('decide')
    await vi.waitFor(() => expect(rows()).toHaveLength(1))
    expect(rows()[0]).toEqual({ intentId: 'system', data: { intentId: 'system', count: 1, places: { decide: 1 }, firstAt: T0, lastAt: T0 } })

    for (let i = 0; i < 500; i++) {
      now += 10
      failures.record(i % 5 === 0 ? 'dashboard' : i % 5 === 1 ? 'gateway_operator_route' : 'decide')
    }
    await vi.advanceTimersByTimeAsync(59_000)
    expect(rows()).toHaveLength(1)
    await vi.advanceTimersByTimeAsync(1_000)
    await vi.waitFor(() => expect(rows()).toHaveLength(2))
    expect(rows()[1]?.data).toEqual({ intentId: 'system', count: 500, places: { dashboard: 100, gateway_operator_route: 100, decide: 300 }, firstAt: T0 + 10, lastAt: T0 + 5000 })

    // A window with no refusal: nothing written, and the window closes.
    await vi.advanceTimersByTimeAsync(120_000)
    expect(rows()).toHaveLength(2)
    now = T0 + 200_000
    failures.record('dashboard')
    await vi.waitFor(() => expect(rows()).toHaveLength(3))
    expect(rows()[2]?.data).toMatchObject({ count: 1, places: { dashboard: 1 }, firstAt: T0 + 200_000 })
    expect(logged.map((s) => s.count)).toEqual([1, 500, 1])
    await failures.close()
  })

  it('close writes what the window counted so far: nothing is lost at shutdown; after it nothing more is counted', async () => {
    const failures = createFailedSignIns({ audit, clock: () => now })
    failures.record('decide')
    failures.record('decide')
    failures.record('dashboard')
    await failures.close()
    failures.record('decide')
    await vi.advanceTimersByTimeAsync(120_000)
    expect(rows().map((r) => r.data)).toEqual([
      { intentId: 'system', count: 1, places: { decide: 1 }, firstAt: T0, lastAt: T0 },
      { intentId: 'system', count: 2, places: { decide: 1, dashboard: 1 }, firstAt: T0, lastAt: T0 },
    ])
  })

  it('a row that cannot be written is reported, not thrown, also while an earlier write is still on its way', async () => {
    const errors: string[] = []
    let finishFirst = () => {}
    let calls = 0
    const append = () => {
      calls += 1
      if (calls === 1) return new Promise<never>((_, reject) => (finishFirst = () => reject(new Error('slow disk'))))
      return Promise.reject(new Error('disk full'))
    }
    const failures = createFailedSignIns({ audit: { append }, clock: () => now, onError: (e) => errors.push(e.message) })
    failures.record('decide')
    failures.record('decide')
    const closed = failures.close()
    // The second write failed while the first was pending: nothing unhandled (vitest fails the run on one).
    await new Promise((r) => setImmediate(r))
    finishFirst()
    await closed
    expect(errors).toEqual(['disk full', 'slow disk'])
  })

  it('recordingRefusals records a presented token that names nobody, not a missing one or an accepted one', async () => {
    const recorded: string[] = []
    const watched = recordingRefusals(alice, { record: (place) => recorded.push(place), close: async () => undefined }, 'decide')
    expect(watched.identify('a'.repeat(40))).toEqual({ name: 'alice' })
    for (const nothing of [undefined, null, '']) expect(watched.identify(nothing)).toBeNull()
    expect(recorded).toEqual([])
    expect(watched.identify('b'.repeat(40))).toBeNull()
    expect(watched.identify('short')).toBeNull()
    expect(watched.identify(42)).toBeNull()
    expect(recorded).toEqual(['decide', 'decide', 'decide'])
    expect(watched.named).toBe(1)
  })

  it('the log line says how many, where and when', () => {
    expect(describeSignInFailures({ count: 1, places: { decide: 1 }, firstAt: T0, lastAt: T0 })).toBe(
      `1 refused operator token (decide 1) at 2026-12-07T22:00:00.000Z; audited as ${SIGN_IN_FAILED_EVENT}`,
    )
    expect(describeSignInFailures({ count: 3, places: { decide: 2, dashboard: 1 }, firstAt: T0, lastAt: T0 + 1000 })).toBe(
      `3 refused operator tokens (decide 2, dashboard 1) from 2026-12-07T22:00:00.000Z to 2026-12-07T22:00:01.000Z; audited as ${SIGN_IN_FAILED_EVENT}`,
    )
  })
})
