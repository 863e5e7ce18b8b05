import { describe, expect, it } from 'vitest'
import { AuditDataError, assertPlainJson } from './plainJson.js'

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
