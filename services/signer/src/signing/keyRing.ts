import type { KeyBackend, RingKey } from './keyBackend.js'
import { OperatorError } from '@countersign/shared'

export type { RingKey } from './keyBackend.js'

export class KeyRingError extends OperatorError {
  override name = 'KeyRingError'
}

/** The keys the signer can sign with, by lowercase address. Lives only in the signer's memory. */
export interface KeyRing {
  get(address: string): RingKey | undefined
  all(): RingKey[]
}

/**
 * A ring of keys from any backends. One address in two backends is refused:
 * every key has one backend, so which one signs is never a guess.
 */
export function keyRingOf(keys: Iterable<RingKey>): KeyRing {
  const map = new Map<string, RingKey>()
  for (const k of keys) {
    const address = k.address.toLowerCase()
    const other = map.get(address)
    if (other) throw new KeyRingError(`key ${k.address} is in both the ${other.backend} and the ${k.backend} backend; keep it in one`)
    map.set(address, k)
  }
  return {
    get: (address) => map.get(address.toLowerCase()),
    all: () => [...map.values()],
  }
}

/** The ring of every key of the given backends. */
export function keyRingOfBackends(backends: KeyBackend[]): KeyRing {
  return keyRingOf(backends.flatMap((b) => b.keys()))
}
