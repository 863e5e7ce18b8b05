import { mkdtempSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { openGatewayDb } from './gatewayDb.js'
import { createIntentReservations } from './intentReservations.js'

const T0 = Date.UTC(2026, 10, 23, 12, 0, 0)
const ID = '7d1b9c4e-5f3a-4e2b-8c6d-0a9e8f7b6c5d'
const MINE = `0x${'aa'.repeat(32)}`
const OTHER = `0x${'bb'.repeat(32)}`

const toClose: Array<{ close(): unknown }> = []
afterEach(() => {
  for (const c of toClose.splice(0)) c.close()
})

function openAt(file: string) {
  const db = openGatewayDb(file)
  toClose.push(db)
  return { db, reservations: createIntentReservations(db) }
}

describe('intent reservations (gateway.db)', () => {
  it('a live hold refuses another hash and nothing changes; the same hash extends it, never shortens it; an expired hold is free and dropped', () => {
    const { db, reservations } = openAt(path.join(mkdtempSync(path.join(os.tmpdir(), 'cs-hold-')), 'gateway.db'))
    expect(reservations.reserve(ID, MINE, T0, T0 + 600_000)).toBe(true)
    expect(reservations.reserve(ID, OTHER, T0 + 1, T0 + 600_001)).toBe(false)
    expect(reservations.heldForAnother(ID, OTHER, T0 + 1)).toBe(true)
    expect(reservations.heldForAnother(ID, MINE, T0 + 1)).toBe(false)
    // Asked again later (an approver restart): the hold runs from then; an earlier end is ignored.
    expect(reservations.reserve(ID, MINE, T0 + 100_000, T0 + 700_000)).toBe(true)
    expect(reservations.reserve(ID, MINE, T0 + 100_001, T0 + 200_000)).toBe(true)
    expect(reservations.heldForAnother(ID, OTHER, T0 + 699_999)).toBe(true)
    expect(reservations.heldForAnother(ID, OTHER, T0 + 700_000)).toBe(false)
    expect(reservations.reserve(ID, OTHER, T0 + 700_000, T0 + 1_300_000)).toBe(true)
    expect(reservations.heldForAnother(ID, MINE, T0 + 700_001)).toBe(true)
    // The intent is hashed only for an id that is held (a build of any other id pays nothing).
    const unhashable = () => {
      throw new Error('hashed an intent whose id nobody holds')
    }
    expect(reservations.heldForAnother('3f2e1d0c-9b8a-4766-8554-433221100fed', unhashable, T0 + 700_001)).toBe(false)
    expect(reservations.heldForAnother(ID, unhashable, T0 + 1_300_000)).toBe(false)
    // Expired rows go when anything is reserved: the table does not grow with old requests.
    reservations.reserve('0d6f2a3b-1c4e-4f5a-9b8c-7d6e5f4a3b2c', MINE, T0 + 2_000_000, T0 + 2_600_000)
    expect(db.prepare('SELECT count(*) AS n FROM intent_reservations').get()).toEqual({ n: 1 })
  })

  it('a hold is in the file: the database opened again still has it', () => {
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'cs-hold-')), 'gateway.db')
    const first = openAt(file)
    first.reservations.reserve(ID, MINE, T0, T0 + 600_000)
    first.db.close()
    expect(openAt(file).reservations.heldForAnother(ID, OTHER, T0 + 599_999)).toBe(true)
  })
})

describe('intent reservations in memory', () => {
  it('a hold whose write failed is not held: the memory follows the file', () => {
    const { db, reservations } = openAt(path.join(mkdtempSync(path.join(os.tmpdir(), 'cs-hold-')), 'gateway.db'))
    expect(reservations.reserve(ID, MINE, T0, T0 + 600_000)).toBe(true)
    db.close()
    const other = '0d6f2a3b-1c4e-4f5a-9b8c-7d6e5f4a3b2c'
    expect(() => reservations.reserve(other, MINE, T0 + 1, T0 + 600_001)).toThrow(/not open/)
    expect(reservations.heldForAnother(other, OTHER, T0 + 2)).toBe(false)
    expect(reservations.heldForAnother(ID, OTHER, T0 + 2)).toBe(true)
  })

  it('holds of many ids: each refuses only its own id, until its own end', () => {
    const { reservations } = openAt(path.join(mkdtempSync(path.join(os.tmpdir(), 'cs-hold-')), 'gateway.db'))
    const ids = Array.from({ length: 50 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`)
    ids.forEach((id, i) => expect(reservations.reserve(id, MINE, T0 + i * 1000, T0 + i * 1000 + 600_000)).toBe(true))
    // The first ten are extended (moved to the back of the memory's order) at T0 + 100 s.
    ids.slice(0, 10).forEach((id) => expect(reservations.reserve(id, MINE, T0 + 100_000, T0 + 700_000)).toBe(true))
    // At T0 + 620 s the holds made before T0 + 20 s have ended, except the extended ones; a reserve sweeps.
    reservations.reserve('3f2e1d0c-9b8a-4766-8554-433221100fed', MINE, T0 + 620_000, T0 + 1_220_000)
    ids.forEach((id, i) => expect(reservations.heldForAnother(id, OTHER, T0 + 620_000), id).toBe(i < 10 || i * 1000 + 600_000 > 620_000))
  })

  // Found by review: swept in the order holds were made, an expired hold made after a later-ending one (the clock
  // had stepped back) stayed in memory, though the file had dropped it; the clock stepping back again revived it.
  it('a hold the file dropped is dropped from memory too, though made after one that ends later (the clock stepped back)', () => {
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'cs-hold-')), 'gateway.db')
    const { reservations } = openAt(file)
    const later = '0d6f2a3b-1c4e-4f5a-9b8c-7d6e5f4a3b2c'
    expect(reservations.reserve(later, MINE, T0 + 1000, T0 + 601_000)).toBe(true)
    expect(reservations.reserve(ID, MINE, T0, T0 + 600_000)).toBe(true)
    reservations.reserve('3f2e1d0c-9b8a-4766-8554-433221100fed', MINE, T0 + 600_500, T0 + 1_200_500)
    // The clock steps back again: what the file no longer holds is not held, as after a restart.
    expect(reservations.heldForAnother(ID, OTHER, T0 + 599_000)).toBe(false)
    expect(openAt(file).reservations.heldForAnother(ID, OTHER, T0 + 599_000)).toBe(false)
    expect(reservations.heldForAnother(later, OTHER, T0 + 600_900)).toBe(true)
  })
})
