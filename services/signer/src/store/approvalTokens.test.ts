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
  return { db, time, rowTime, tokens }
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

  // Found by review: the 60 s sweep forgot a lapsed token's monotonic deadline but kept its row, which the
  // stepped-back wall clock still read as live, so check and consume took the token again.
  it('refuses a lapsed token after the sweep too, with the wall clock stepped back an hour', () => {
    const { time, rowTime, tokens } = store()
    const token = tokens.mint({ ...binding, intentId }, rowTime())
    const live = tokens.mint({ ...binding, intentId }, rowTime() + 1)
    time.wall -= 60 * 60_000
    time.wall += APPROVAL_TOKEN_TTL_MS + 1_000
    time.monotonic += APPROVAL_TOKEN_TTL_MS + 1_000
    const fresh = tokens.mint({ ...binding, intentId }, rowTime())
    expect(tokens.sweep(time.wall)).toBe(2)
    expect(tokens.check(token.id, binding, time.wall)).not.toBeNull()
    expect(tokens.consume(token.id, binding, rowTime())).not.toBeNull()
    expect(tokens.consume(live.id, binding, rowTime())).not.toBeNull()
    expect(tokens.consume(fresh.id, binding, rowTime())).toBeNull()
  })

  it('still refuses by the wall clock alone', () => {
    const { time, rowTime, tokens } = store()
    const token = tokens.mint({ ...binding, intentId }, rowTime())
    time.wall += APPROVAL_TOKEN_TTL_MS
    expect(tokens.check(token.id, binding, time.wall)).toBe('expired')
    expect(tokens.consume(token.id, binding, rowTime())).toBe('expired')
  })

  // Before, the monotonic deadlines were in memory only: a signer restarted after an NTP step back of an hour
  // read every token it had minted as an hour younger.
  it('refuses a token once its 300 s have passed across a restart of the signer with the wall clock stepped back an hour', () => {
    const { db, time, rowTime, tokens } = store()
    const token = tokens.mint({ ...binding, intentId }, rowTime())
    const kept = tokens.mint({ ...binding, intentId }, rowTime())
    // 100 s later the signer still writes rows (another token here): signer.db knows that time.
    time.monotonic += 100_000
    time.wall += 100_000
    tokens.mint({ ...binding, intentId }, rowTime())
    // Restart: a new process (its monotonic clock starts anew), the wall clock an hour behind.
    time.wall -= 60 * 60_000
    time.monotonic = 0
    const restarted = createApprovalTokens(db, () => time.monotonic, createRowTimes(db, () => time.wall)())
    const restartedRowTime = createRowTimes(db, () => time.wall)
    // What was left of the first two tokens' 300 s at the last time signer.db holds: 200 s.
    time.monotonic += 200_000 - 5
    time.wall += 200_000 - 5
    expect(restarted.consume(kept.id, binding, restartedRowTime())).toBeNull()
    time.monotonic += 5
    time.wall += 5
    expect(restarted.check(token.id, binding, time.wall)).toBe('expired')
    expect(restarted.consume(token.id, binding, restartedRowTime())).toBe('expired')
  })

  it('keeps what is left of a token across a restart with a clock that did not step', () => {
    const { db, time, rowTime, tokens } = store()
    const token = tokens.mint({ ...binding, intentId }, rowTime())
    time.wall += 200_000
    time.monotonic = 0
    const restarted = createApprovalTokens(db, () => time.monotonic, createRowTimes(db, () => time.wall)())
    time.monotonic += APPROVAL_TOKEN_TTL_MS - 200_000 - 1
    time.wall += APPROVAL_TOKEN_TTL_MS - 200_000 - 1
    expect(restarted.check(token.id, binding, time.wall)).toBeNull()
    time.monotonic += 1
    time.wall += 1
    expect(restarted.check(token.id, binding, time.wall)).toBe('expired')
  })
})
