import { describe, expect, it } from 'vitest'
import { createSkillCalls, SKILL_CALL_HEADER, SKILL_RUN_HEADER } from './skillCalls.js'

describe('skill runner calls', () => {
  it('a call is found by its own headers while it lasts, with a fresh owner each time and its run’s signal', () => {
    const calls = createSkillCalls()
    const run = new AbortController()
    const first = calls.begin(run.signal)
    const second = calls.begin(run.signal)
    const found = calls.of(first.headers)
    expect(found).toEqual({ owner: first.headers[SKILL_CALL_HEADER], stopped: run.signal })
    expect(calls.of(second.headers)?.owner).not.toBe(found?.owner)
    first.end()
    expect(calls.of(first.headers)).toBeNull()
    expect(calls.of(second.headers)).not.toBeNull()
  })

  it('a client’s request is nobody’s call: no secret, a wrong or non-ASCII one of the same length, or a call id that was never begun', () => {
    const calls = createSkillCalls()
    const { headers } = calls.begin(new AbortController().signal)
    const secret = headers[SKILL_RUN_HEADER]!
    expect(calls.of({ [SKILL_CALL_HEADER]: headers[SKILL_CALL_HEADER] })).toBeNull()
    expect(calls.of({ ...headers, [SKILL_RUN_HEADER]: `${secret.slice(0, -1)}x` })).toBeNull()
    // Bytes beyond ASCII (an HTTP header is read as latin1): the same length in characters, twice the bytes.
    expect(calls.of({ ...headers, [SKILL_RUN_HEADER]: '\u00e9'.repeat(secret.length) })).toBeNull()
    expect(calls.of({ ...headers, [SKILL_RUN_HEADER]: [secret, secret] })).toBeNull()
    // The secret alone does not name a call; another call's id (or a made-up one) finds nothing.
    expect(calls.of({ ...headers, [SKILL_CALL_HEADER]: crypto.randomUUID() })).toBeNull()
    expect(calls.of({ [SKILL_RUN_HEADER]: secret })).toBeNull()
  })
})
