import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const here = path.dirname(fileURLToPath(import.meta.url))
const pkg = (p: string) =>
  JSON.parse(readFileSync(p, 'utf8')) as { dependencies?: Record<string, string>; devDependencies?: Record<string, string>; optionalDependencies?: Record<string, string> }

describe('the signer’s dependency set', () => {
  it('is exactly what signing needs: no HTTP server, no HTTP client', () => {
    const signer = pkg(path.join(here, '../package.json'))
    expect(Object.keys(signer.dependencies ?? {}).sort()).toEqual(['@countersign/shared', '@noble/ciphers', '@noble/hashes', 'better-sqlite3', 'viem'])
    expect(signer.devDependencies).toBeUndefined()
  })

  it('has one optional dependency, pkcs11js, pinned: loaded only when SERVICE_PKCS11_MODULE names an HSM module', () => {
    const signer = pkg(path.join(here, '../package.json'))
    expect(signer.optionalDependencies).toEqual({ pkcs11js: '2.1.7' })
    // Nothing but the PKCS#11 backend's loader imports it, and that only on demand.
    const loader = readFileSync(path.join(here, 'pkcs11/token.ts'), 'utf8')
    expect(loader).toMatch(/await import\('pkcs11js'\)/)
    const main = readFileSync(path.join(here, 'main.ts'), 'utf8')
    expect(main).not.toMatch(/from '\.\/pkcs11\//)
  })

  it('and shared, which it loads, brings no HTTP framework or client either', () => {
    const shared = pkg(path.join(here, '../../../shared/package.json'))
    const forbidden = ['fastify', '@fastify/websocket', 'axios', 'node-fetch', 'undici', 'got', 'ws', 'express', 'pino']
    expect(Object.keys(shared.dependencies ?? {}).filter((d) => forbidden.includes(d))).toEqual([])
    // Pinned, so that whatever joins the signer's process through shared/ is
    // a decision someone reviews. hash-wasm: the WebAssembly keccak256
    // (canonical/keccak.ts), no dependencies of its own.
    expect(Object.keys(shared.dependencies ?? {}).sort()).toEqual([
      '@noble/ciphers',
      '@noble/hashes',
      'ajv',
      'ajv-formats',
      'better-sqlite3',
      'hash-wasm',
      'viem',
    ])
  })
})
