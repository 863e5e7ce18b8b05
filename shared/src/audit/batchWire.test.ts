import { describe, expect, it } from 'vitest'
import { decodeBatch, encodeBatch } from './batchWire.js'
import type { PreparedEvent } from './writer.js'

const event = (over: Partial<PreparedEvent> = {}): PreparedEvent => ({
  id: '0b1c2d3e-0000-4000-8000-000000000001',
  timestamp: 1_795_000_000_000,
  intentId: 'intent-1',
  event: 'tx_built',
  dataJcs: '{"description":"Send 1 ETH","intentId":"intent-1"}',
  ...over,
})

describe('audit batch wire format', () => {
  it('gives back every field of every event, in order', () => {
    const batch = [event(), event({ id: 'x', timestamp: 0, intentId: 'system', event: 'skill_revoked', dataJcs: '{}' }), event({ dataJcs: '{"a":"1:2:3"}' })]
    expect(decodeBatch(encodeBatch(batch))).toEqual(batch)
  })

  it('keeps values that look like its own separators, and characters outside ASCII', () => {
    const tricky = event({ intentId: '12:ab', event: '3:x', dataJcs: '{"d":"Ünïcödé 🦊 \\n 5:","intentId":"12:ab"}' })
    expect(decodeBatch(encodeBatch([tricky]))).toEqual([tricky])
  })

  it('an empty batch is an empty string', () => {
    expect(encodeBatch([])).toBe('')
    expect(decodeBatch('')).toEqual([])
  })

  it('refuses what it could not have written', () => {
    const wire = encodeBatch([event()])
    expect(() => decodeBatch(wire.slice(0, -1))).toThrow(/runs past the end/)
    expect(() => decodeBatch(`x${wire}`)).toThrow(/malformed field length/)
    expect(() => decodeBatch('1:a3:1.51:b1:c2:{}')).toThrow(/not an integer/)
    expect(() => decodeBatch(`${wire}1:a`)).toThrow(/malformed field length|runs past/)
  })
})
