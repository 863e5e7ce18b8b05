import { describe, expect, it } from 'vitest'
import { actions, makeIntent } from '../server/testing/intents.js'
import { intentHash } from '../canonical/hash.js'
import { normalizeIntent } from './normalizeIntent.js'

describe('normalizeIntent', () => {
  it('writes the id in lower case, so that one intent has one id and one hash whichever case the client used (found by review: upper case was a 400)', () => {
    const intent = makeIntent({ action: actions.native() })
    const shouted = { ...intent, id: intent.id.toUpperCase() }
    expect(normalizeIntent(shouted).id).toBe(intent.id)
    expect(intentHash(normalizeIntent(shouted))).toBe(intentHash(normalizeIntent(intent)))
  })

  it('gives back the intent itself when there is nothing to change', () => {
    const intent = makeIntent({ action: actions.native() })
    expect(normalizeIntent(intent)).toBe(intent)
  })
})
