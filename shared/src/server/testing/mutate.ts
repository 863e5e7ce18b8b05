// Mutations of valid JSON values for randomised tests (the API fuzz, the
// socket fuzzers): odd values that have broken parsers, number handling and
// type assumptions, put into, removed from or added to a valid body.

import type { Random } from './seededRandom.js'

function nested(depth: number, leaf: unknown, asArray: boolean): unknown {
  let v = leaf
  for (let i = 0; i < depth; i++) v = asArray ? [v] : { a: v }
  return v
}

/** Values that have broken JSON services: wrong types, edge numbers, odd strings, deep nesting. */
export const oddValues: readonly unknown[] = [
  null, true, false, 0, -1, 1.5, -0.0, 1e21, 1e308, -1e308, 2 ** 53, 2 ** 53 + 2, 2 ** 31, 2 ** 32, -(2 ** 63),
  '', ' ', '0', '-1', '+1', '1.0', '1e18', '0x10', '0b1', '00012', ' 12', '12 ', '١٢', '１２', 'NaN', 'Infinity',
  '9'.repeat(80), (2n ** 256n).toString(), (2n ** 256n - 1n).toString(), (2n ** 255n).toString(), (2n ** 64n).toString(),
  'a'.repeat(5000), '\u0000', '\ud800', '\u202e0xdead', '🦊', '<script>alert(1)</script>', '${process.env}', '%s%n',
  // Markup that runs if a page ever puts a value into HTML: it sets window.__pwned (the dashboard check looks for it).
  '<img src=x onerror="window.__pwned=1">', '"><svg onload="window.__pwned=1">', 'javascript:window.__pwned=1',
  'constructor', '__proto__', 'toString', 'hasOwnProperty',
  `0x${'f'.repeat(40)}`, `0x${'F'.repeat(40)}`, `0X${'a'.repeat(40)}`, `0x${'g'.repeat(40)}`, `0x${'a'.repeat(39)}`, `0x${'a'.repeat(41)}`,
  `0x${'0'.repeat(40)}`, `0x${'0'.repeat(64)}`, `0x${'ab'.repeat(32)}`, '0x', '0x0',
  '00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff', '0123e456-e89b-12d3-a456-42661417400G',
  [], [1], [null], ['transfer'], {}, { a: 1 }, { type: 'evm' },
  nested(60, 1, false), nested(60, 1, true),
]

/** A deep copy of a JSON value. */
export const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T

type Path = Array<string | number>

/** Every path to a member (objects and arrays included) inside `value`. */
function paths(value: unknown, prefix: Path = [], out: Path[] = []): Path[] {
  if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      const p = [...prefix, Array.isArray(value) ? Number(k) : k]
      out.push(p)
      paths(v, p, out)
    }
  }
  return out
}

function parentOf(root: Record<string, unknown>, p: Path): Record<string | number, unknown> {
  let node: unknown = root
  for (const key of p.slice(0, -1)) node = (node as Record<string | number, unknown>)[key]
  return node as Record<string | number, unknown>
}

/**
 * One to three mutations of a valid body: a member set to an odd value, a
 * member removed, an extra member added, or a member set to a value taken
 * from `related` (another valid body, so that types stay right but meanings
 * mix: a swap's fields under a transfer, another chain id).
 */
export function mutate(rng: Random, body: Record<string, unknown>, related: readonly unknown[] = []): Record<string, unknown> {
  const out = clone(body)
  const rounds = 1 + rng.int(3)
  for (let i = 0; i < rounds; i++) {
    const all = paths(out)
    if (all.length === 0) break
    const p = rng.pick(all)
    const parent = parentOf(out, p)
    const key = p[p.length - 1]!
    switch (rng.int(4)) {
      case 0:
        parent[key] = clone(rng.pick(oddValues))
        break
      case 1:
        if (Array.isArray(parent)) parent.splice(Number(key), 1)
        else delete parent[key]
        break
      case 2:
        if (parent && typeof parent === 'object' && !Array.isArray(parent)) parent[rng.pick(['extra', 'constructor', 'prototype', 'toJSON', 'asset', 'amount', 'value', 'data'])] = clone(rng.pick(oddValues))
        break
      default: {
        const donor = related.length > 0 ? rng.pick(related) : undefined
        const candidates = donor ? paths(donor).filter((q) => String(q[q.length - 1]) === String(key)) : []
        if (candidates.length > 0) {
          const q = rng.pick(candidates)
          parent[key] = clone(q.reduce<unknown>((n, k) => (n as Record<string | number, unknown>)[k], donor))
        } else {
          parent[key] = clone(rng.pick(oddValues))
        }
      }
    }
  }
  return out
}
