import { mkdtempSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { APPROVAL_TOKEN_TTL_MS } from '@countersign/shared'
import { createApprovalTokens } from './approvalTokens.js'
import { createRowTimes } from './rowTimes.js'
import { openSignerDb } from './signerDb.js'

const closers: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const close of closers.splice(0)) await close()
})

/** A signer.db, its row times, and a wall clock and a monotonic clock the test moves. */
function store() {
  const { db, wal } = openSignerDb(path.join(mkdtempSync(path.join(os.tmpdir(), 'cs-tokens-')), 'signer.db'))
  closers.push(async () => {
    await wal.close()
    db.close()
  })
  const time = { wall: 1_800_000_000_000, monotonic: 5_000 }
  const rowTime = createRowTimes(db, () => time.wall)
  const tokens = createApprovalTokens(db, () => time.monotonic)
  return { time, rowTime, tokens }
}

const binding = { txRequestHash: `0x${'11'.repeat(32)}`, intentHash: `0x${'22'.repeat(32)}` }
const intentId = '7d1d3f0e-8a5b-4c1a-9f5e-3b2a1c0d9e8f'

describe('approval tokens: 300 s of real time, whatever the wall clock does', () => {
  // Found by review: check read the wall clock and consume the row times, which never go back; after an
  // NTP step back of an hour, a token stayed usable for that hour plus its 300 s.
  it('refuses a token once its 300 s have passed, with the wall clock stepped back an hour meanwhile', () => {
    const { time, rowTime, tokens } = store()
    const token = tokens.mint({ ...binding, intentId }, rowTime())
    time.wall -= 60 * 60_000
    time.wall += APPROVAL_TOKEN_TTL_MS
    time.monotonic += APPROVAL_TOKEN_TTL_MS
    expect(tokens.check(token.id, binding, time.wall)).toBe('expired')
    expect(tokens.consume(token.id, binding, rowTime())).toBe('expired')
  })

  it('takes a token within its 300 s, with the wall clock stepped back or not, exactly once', () => {
    const { time, rowTime, tokens } = store()
    const token = tokens.mint({ ...binding, intentId }, rowTime())
    time.wall -= 60 * 60_000
    time.monotonic += APPROVAL_TOKEN_TTL_MS - 1
    expect(tokens.check(token.id, binding, time.wall)).toBeNull()
    expect(tokens.consume(token.id, binding, rowTime())).toBeNull()
    expect(tokens.consume(token.id, binding, rowTime())).toBe('consumed')
  })

  it('still refuses by the wall clock, as after a restart (the monotonic deadline is in memory only)', () => {
    const { time, rowTime, tokens } = store()
    const token = tokens.mint({ ...binding, intentId }, rowTime())
    time.wall += APPROVAL_TOKEN_TTL_MS
    expect(tokens.check(token.id, binding, time.wall)).toBe('expired')
    expect(tokens.consume(token.id, binding, rowTime())).toBe('expired')
  })
})
