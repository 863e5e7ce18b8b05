import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { keccak256Hex, keccak256HexJs, keccakImplementation } from './keccak.js'

const EMPTY = '0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470'
const ABC = '0x4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45'

describe('keccak256Hex', () => {
  it('uses WebAssembly where the runtime has it', () => {
    expect(keccakImplementation).toBe('wasm')
  })

  it('matches the well-known Keccak-256 vectors in both implementations, from bytes and from strings', () => {
    for (const hash of [keccak256Hex, keccak256HexJs]) {
      expect(hash(new Uint8Array())).toBe(EMPTY)
      expect(hash('')).toBe(EMPTY)
      expect(hash('abc')).toBe(ABC)
      expect(hash(new TextEncoder().encode('abc'))).toBe(ABC)
    }
  })

  it('agrees with the JS implementation at every length around the 136-byte rate and beyond', () => {
    const buf = randomBytes(700)
    for (let len = 0; len <= 700; len++) {
      const bytes = buf.subarray(0, len)
      expect(keccak256Hex(bytes)).toBe(keccak256HexJs(bytes))
    }
  })

  it('hashes a string as its UTF-8 bytes, non-ASCII and lone surrogates included', () => {
    for (const s of ['€', 'Transfer 5 USDC to 0x2222 — 👍', 'a\u0000b', '\ud800', 'x'.repeat(135) + '€']) {
      expect(keccak256Hex(s)).toBe(keccak256HexJs(new TextEncoder().encode(s)))
    }
  })

  it('does not carry state from one call to the next', () => {
    keccak256Hex(randomBytes(300))
    expect(keccak256Hex('abc')).toBe(ABC)
  })

  it('falls back to the JS implementation, with the same digests, under node --jitless (no WebAssembly)', () => {
    // The compiled module: a child process cannot load TypeScript.
    const compiled = fileURLToPath(new URL('../../dist/canonical/keccak.js', import.meta.url))
    const script = `const k = await import(${JSON.stringify(compiled)}); console.log(JSON.stringify([k.keccakImplementation, k.keccak256Hex('abc'), k.keccak256Hex('')]))`
    // stderr piped: node warns that --jitless turns WebAssembly off, which is the point.
    const out = execFileSync(process.execPath, ['--jitless', '--input-type=module', '-e', script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
    expect(JSON.parse(out)).toEqual(['js', ABC, EMPTY])
  })
})
