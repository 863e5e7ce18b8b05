import { keccak_256 } from '@noble/hashes/sha3.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'
import { createKeccak } from 'hash-wasm'
import type { Hex } from '../types.js'

// Every request hashes: txRequestHash on the gateway's event loop and two
// audit rows on its writer thread. @noble/hashes' keccak computes the 64-bit
// lanes with pairs of 32-bit numbers and costs 9–30 µs for these short inputs
// here; hash-wasm's WebAssembly build of the reference C code costs 1–3 µs
// (bench/RESULTS.md). Under `node --jitless` there is no WebAssembly, so the
// audited JS implementation remains the fallback; the tests hold both to the
// same digests.
const wasm = typeof (globalThis as { WebAssembly?: unknown }).WebAssembly === 'object' ? await createKeccak(256) : null

/** Which implementation this process uses ('wasm' unless the runtime has no WebAssembly). */
export const keccakImplementation: 'wasm' | 'js' = wasm ? 'wasm' : 'js'

/** keccak256 of bytes, or of a string's UTF-8 bytes, as 0x-prefixed lowercase hex. */
export function keccak256Hex(input: Uint8Array | string): Hex {
  if (wasm) {
    // Synchronous from start to digest: nothing can interleave on this thread.
    wasm.init()
    wasm.update(input)
    return `0x${wasm.digest('hex')}`
  }
  return keccak256HexJs(input)
}

/** The pure-JS path, exported so tests can hold both implementations to one answer. */
export function keccak256HexJs(input: Uint8Array | string): Hex {
  return `0x${bytesToHex(keccak_256(typeof input === 'string' ? utf8ToBytes(input) : input))}`
}
