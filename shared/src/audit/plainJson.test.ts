import { describe, expect, it } from 'vitest'
import { canonicalize } from '../canonical/jcs.js'
import { seededRandom, type Random } from '../server/testing/seededRandom.js'
import { AuditDataError, assertPlainJson, canonicalPlainJson } from './plainJson.js'

describe('assertPlainJson', () => {
  it('accepts plain JSON, including null-prototype objects and undefined members', () => {
    const bare = Object.assign(Object.create(null) as object, { a: 1 })
    expect(() => assertPlainJson({ s: 'x', n: -1.5, b: false, z: null, a: [1, 'two', { three: [] }], bare, skip: undefined }, 'data')).not.toThrow()
  })

  it.each([
    ['a BigInt', { n: 10n }, /data\.n is not plain JSON \(its type is bigint/],
    ['a Date', { when: new Date(0) }, /data\.when is not plain JSON \(its type is Date/],
    ['a Map', { m: new Map() }, /data\.m is not plain JSON \(its type is Map/],
    ['a class instance', { e: new Error('x') }, /data\.e is not plain JSON \(its type is Error/],
    ['a function', { f: () => 1 }, /data\.f is not plain JSON \(its type is function/],
    ['NaN', { x: [1, Number.NaN] }, /data\.x\[1\] is NaN/],
    ['Infinity', { x: Infinity }, /numbers must be finite/],
    ['undefined in an array', { x: [undefined] }, /data\.x\[0\] is not plain JSON \(its type is undefined/],
    ['a Uint8Array (key bytes)', { key: new Uint8Array(32) }, /data\.key is not plain JSON \(its type is Uint8Array/],
  ])('refuses %s, naming where it is', (_name, value, message) => {
    expect(() => assertPlainJson(value, 'data')).toThrow(AuditDataError)
    expect(() => assertPlainJson(value, 'data')).toThrow(message)
  })

  it('refuses cycles and absurd nesting instead of overflowing the stack', () => {
    const loop: Record<string, unknown> = { a: {} }
    ;(loop.a as Record<string, unknown>).back = loop
    expect(() => assertPlainJson(loop, 'data')).toThrow(/data\.a\.back refers back .* cycle/)
    let deep: unknown = 1
    for (let i = 0; i < 100; i++) deep = [deep]
    expect(() => assertPlainJson(deep, 'data')).toThrow(/nested more than 64 levels/)
  })

  it('a value seen twice without a cycle is fine', () => {
    const shared = { x: 1 }
    expect(() => assertPlainJson({ a: shared, b: [shared, shared] }, 'data')).not.toThrow()
  })
})

/** A random plain JSON value: strings drawn from code units JSON must escape, surrogates and plain text alike. */
function randomPlain(rng: Random, depth: number): unknown {
  const units = ['a', 'Z', '0', ' ', '"', '\\', '\n', '\u0000', '\u001f', '\u007f', '\u2028', 'é', '€', '\ud83d', '\ude00', '/']
  const text = () => Array.from({ length: rng.int(6) }, () => rng.pick(units)).join('')
  const kind = depth > 4 ? rng.int(4) : rng.int(6)
  switch (kind) {
    case 0:
      return text()
    case 1:
      return rng.pick([0, -0, 1.5, -2, 1e21, 1e-7, 333333333.33333329, Number.MAX_SAFE_INTEGER, 5e-324])
    case 2:
      return rng.pick([true, false])
    case 3:
      return null
    case 4:
      return Array.from({ length: rng.int(4) }, () => randomPlain(rng, depth + 1))
    default: {
      const record: Record<string, unknown> = rng.chance(0.2) ? (Object.create(null) as Record<string, unknown>) : {}
      for (let i = rng.int(5); i > 0; i--) record[text()] = rng.chance(0.1) ? undefined : randomPlain(rng, depth + 1)
      return record
    }
  }
}

describe('canonicalPlainJson', () => {
  it('gives what canonicalize gives, for random plain JSON', () => {
    const seed = 20261127
    const rng = seededRandom(seed)
    for (let i = 0; i < 5000; i++) {
      const value = { v: randomPlain(rng, 1) }
      const expected = canonicalize(value)
      if (canonicalPlainJson(value, 'data') !== expected) expect.fail(`seed ${seed}, value ${i}: ${expected}`)
    }
  })

  it.each([
    ['a BigInt', { n: 10n }],
    ['a Date', { when: new Date(0) }],
    ['a class instance', { e: new Error('x') }],
    ['NaN deep in an array', { x: [1, [{ y: Number.NaN }]] }],
    ['undefined in an array', { x: [undefined] }],
    ['a Uint8Array', { key: new Uint8Array(32) }],
  ])('refuses %s with the error assertPlainJson gives', (_name, value) => {
    let expected: unknown
    try {
      assertPlainJson(value, 'data')
    } catch (err) {
      expected = err
    }
    expect(expected).toBeInstanceOf(AuditDataError)
    expect(() => canonicalPlainJson(value, 'data')).toThrow((expected as Error).message)
  })

  it('refuses cycles and nesting past 64 levels as assertPlainJson does, and allows exactly 64', () => {
    const loop: Record<string, unknown> = { a: {} }
    ;(loop.a as Record<string, unknown>).back = loop
    expect(() => canonicalPlainJson(loop, 'data')).toThrow(/data\.a\.back refers back .* cycle/)
    const nested = (levels: number) => {
      let value: unknown = 1
      for (let i = 0; i < levels; i++) value = [value]
      return value
    }
    expect(canonicalPlainJson(nested(64), 'data')).toBe(canonicalize(nested(64)))
    expect(() => canonicalPlainJson(nested(65), 'data')).toThrow(/nested more than 64 levels/)
  })

  it('refuses an array with an empty slot, which JSON.stringify would write as null', () => {
    // eslint-disable-next-line no-sparse-arrays
    expect(() => canonicalPlainJson({ x: [1, , 3] }, 'data')).toThrow(/data holds an array with an empty slot/)
  })

  it('passes on an error thrown by a getter unchanged', () => {
    const value = {
      get secret(): string {
        throw new RangeError('getter')
      },
    }
    expect(() => canonicalPlainJson(value, 'data')).toThrow(RangeError)
  })
})
