// Inputs for the fuzz tests: a seeded generator (so a failing run can be
// replayed with its seed), mutations of valid bodies (shared/testing/mutate,
// also used by the services' own fuzz tests), odd HTTP bodies and paths.

import { clone, mutate, oddValues } from '@countersign/shared/testing/mutate'
import { seededRandom, type Random } from '@countersign/shared/testing/seededRandom'

export { clone, mutate, oddValues, seededRandom, type Random }

/** A JSON text that is not a plain object, or not JSON at all, or JSON with members a parser may trip on. */
export function oddBodyText(rng: Random, valid: Record<string, unknown>): string {
  const text = JSON.stringify(valid)
  const choices: Array<() => string> = [
    () => '',
    () => 'null',
    () => '[]',
    () => '"intent"',
    () => '12',
    () => text.slice(0, rng.int(text.length)),
    () => text + text,
    () => text.replace('{', '{"__proto__":{"polluted":true},'),
    () => text.replace('{', '{"constructor":{"prototype":{"polluted":true}},'),
    () => text.replace('{', '{"version":"2",'),
    () => text.replace(/"amount":"\d+"/, '"amount":1e400'),
    () => text.replace(/"chainId":\d+/, '"chainId":8453.0000000000001'),
    () => text.replace(/"timestamp":\d+/, '"timestamp":1e400'),
    () => `\ufeff${text}`,
    () => text.replace(/"/g, "'"),
    () => text.replace(/:/, ':\u0000'),
    () => `${'['.repeat(5000)}${']'.repeat(5000)}`,
    () => `{"a":${'{"a":'.repeat(3000)}1${'}'.repeat(3001)}`,
    () => JSON.stringify({ ...valid, padding: 'x'.repeat(70 * 1024) }),
  ]
  return rng.pick(choices)()
}

/** Path parameters: the right shape, near misses, and strings a router or decoder may mishandle. */
export function oddPathSegment(rng: Random): string {
  const raw = rng.pick<unknown>([
    ...oddValues.filter((v) => typeof v === 'string' || typeof v === 'number'),
    `0x${'ab'.repeat(32)}`,
    `0x${'AB'.repeat(32)}`,
    '%', '%zz', '%00', '%ff', 'a/b', '?', '#', ';', '*', '~', ' ',
  ])
  const s = String(raw).slice(0, 300)
  // Mostly well-formed percent-encoding; sometimes the raw text with its reserved characters.
  // (A lone surrogate cannot be percent-encoded: it goes as the bytes of U+FFFD.)
  const text = s.replace(/\p{Cs}/gu, '\ufffd')
  return rng.chance(0.75) ? encodeURIComponent(text) : text.replace(/[/?#\s]/g, (c) => encodeURIComponent(c))
}

/** FUZZ_SEED and FUZZ_ROUNDS, or the test's defaults: the seed is in every failure message, so a run can be replayed. */
export function fuzzSettings(defaultRounds: number): { seed: number; rounds: number } {
  return { seed: Number(process.env.FUZZ_SEED ?? 20261125), rounds: Number(process.env.FUZZ_ROUNDS ?? defaultRounds) }
}

/** Base (chain 8453) tokens and the v3 router, as valid intents name them. */
export const BASE_USDC = { kind: 'erc20', address: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', symbol: 'USDC', decimals: 6 } as const
export const BASE_WETH = { kind: 'erc20', address: '0x4200000000000000000000000000000000000006', symbol: 'WETH', decimals: 18 } as const
export const BASE_ROUTER = '0x2626664c2603336E57B271c5C0b26F421741e481' as const
export const FUZZ_RECIPIENT = '0x000000000000000000000000000000000000bEEF' as const

/**
 * How a JSON-RPC error counts in a socket fuzz run: the service's own refusal
 * (`refusedCode`, with its data.reason), params it rejected (-32602, or
 * -32600 for params that are not an object), an unknown method (-32601), or
 * anything else, which starts with "other" and is a bug (an internal error).
 */
export function rpcOutcome(e: unknown, refusedCode: number): string {
  const { code, data, message } = (e ?? {}) as { code?: unknown; data?: unknown; message?: string }
  if (code === refusedCode) return `refused: ${(data as { reason?: string } | undefined)?.reason}`
  if (code === -32602 || code === -32600) return 'invalid params'
  if (code === -32601) return 'no such method'
  return `other: ${String(code)} ${message ?? String(e)}`
}
