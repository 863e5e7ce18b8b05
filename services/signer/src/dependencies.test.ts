import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { importGraph } from './importGraph.testkit.js'

const here = path.dirname(fileURLToPath(import.meta.url))
const pkg = (p: string) =>
  JSON.parse(readFileSync(p, 'utf8')) as { dependencies?: Record<string, string>; devDependencies?: Record<string, string>; optionalDependencies?: Record<string, string> }

describe('the signer’s dependency set', () => {
  it('is exactly what signing needs: no HTTP server, no HTTP client', () => {
    const signer = pkg(path.join(here, '../package.json'))
    expect(Object.keys(signer.dependencies ?? {}).sort()).toEqual(['@countersign/shared', '@noble/ciphers', '@noble/hashes', 'better-sqlite3', 'tiny-secp256k1', 'viem'])
    expect(signer.devDependencies).toBeUndefined()
  })

  it('signs with tiny-secp256k1 (libsecp256k1 in WebAssembly), pinned, which brings uint8array-tools and nothing else', () => {
    const signer = pkg(path.join(here, '../package.json'))
    expect(signer.dependencies?.['tiny-secp256k1']).toBe('2.2.4')
    const lock = JSON.parse(readFileSync(path.join(here, '../../../package-lock.json'), 'utf8')) as { packages: Record<string, { version: string; dependencies?: Record<string, string> }> }
    const tiny = lock.packages['node_modules/tiny-secp256k1']!
    expect(tiny.version).toBe('2.2.4')
    expect(tiny.dependencies).toEqual({ 'uint8array-tools': '0.0.7' })
    expect(lock.packages['node_modules/uint8array-tools']?.dependencies).toBeUndefined()
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

// What the signer process (and countersign-keys, which holds the same keys)
// really loads, walked from the compiled entry points (npm test builds first).
const repo = path.resolve(here, '../../..')
const signerDist = path.join(repo, 'services/signer/dist')
const sharedDist = path.join(repo, 'shared/dist')
const entries = [path.join(signerDist, 'main.js'), path.join(signerDist, 'cli/keys.js')]
// A worker thread's script is started by path, not imported: the audit writer's, should the signer ever use it.
const workerScripts = [path.join(sharedDist, 'audit/auditWorker.js')]

/** Packages the signer's code may import: the reviewed dependencies of the signer and of shared's trusted part. */
const ALLOWED_PACKAGES = ['@noble/ciphers', '@noble/hashes', 'ajv', 'ajv-formats', 'better-sqlite3', 'hash-wasm', 'viem']
/**
 * Packages it may import only with a dynamic import(): pkcs11js when an HSM
 * module is configured; tiny-secp256k1 whenever the runtime has WebAssembly
 * (under node --jitless, viem's noble signs instead).
 */
const DYNAMIC_PACKAGES: Record<string, string> = { pkcs11js: 'services/signer/dist/pkcs11/token.js', 'tiny-secp256k1': 'services/signer/dist/signing/secp256k1.js' }
/** Node built-ins it may use: no HTTP, TLS, DNS, UDP, child processes or inspector. */
const ALLOWED_BUILTINS = ['node:buffer', 'node:crypto', 'node:events', 'node:fs', 'node:fs/promises', 'node:module', 'node:net', 'node:os', 'node:path', 'node:perf_hooks', 'node:readline', 'node:stream', 'node:string_decoder', 'node:timers', 'node:timers/promises', 'node:url', 'node:util', 'node:worker_threads']

describe('the signer’s import graph', () => {
  const built = entries.every((e) => existsSync(e))
  const graph = built ? importGraph([...entries, ...workerScripts]) : null
  const rel = (f: string) => path.relative(repo, f)

  it('is built (npx tsc -b) so that the walk sees what runs', () => {
    expect(built, `run npx tsc -b first: ${entries.join(', ')}`).toBe(true)
  })

  it('reaches only the signer itself and the trusted part of shared: never shared/src/server (http, display, audit CLI, testing) nor another service', () => {
    const files = [...graph!.files].map(rel)
    const outside = files.filter((f) => !f.startsWith('services/signer/dist/') && !f.startsWith('shared/dist/'))
    expect(outside).toEqual([])
    expect(files.filter((f) => f.startsWith('shared/dist/server/'))).toEqual([])
    // The trusted part it does load, so this list stays honest.
    for (const part of ['canonical/hash.js', 'policy/evaluatePolicy.js', 'protocol/signer.js', 'schemas/txIntent.js', 'actions/index.js', 'config/read.js']) {
      expect(files, part).toContain(`shared/dist/${part}`)
    }
  })

  it('imports no package but the allowed ones; pkcs11js and tiny-secp256k1 only by dynamic import, each from one module', () => {
    const packages = [...graph!.packages.keys()]
    expect(packages.filter((p) => !p.startsWith('node:') && !ALLOWED_PACKAGES.includes(p)).map((p) => `${p} (from ${rel(graph!.packages.get(p)!)})`)).toEqual([])
    expect(packages.filter((p) => p.startsWith('node:') && !ALLOWED_BUILTINS.includes(p)).map((p) => `${p} (from ${rel(graph!.packages.get(p)!)})`)).toEqual([])
    expect(Object.fromEntries([...graph!.dynamicPackages].map(([p, f]) => [p, rel(f)]))).toEqual(DYNAMIC_PACKAGES)
  })

  it('the walk does find forbidden edges: the gateway, walked the same way, reaches fastify and shared/src/server', () => {
    const gateway = importGraph([path.join(repo, 'services/gateway/dist/main.js')])
    expect(gateway.packages.has('fastify')).toBe(true)
    expect([...gateway.files].map(rel).some((f) => f.startsWith('shared/dist/server/http/'))).toBe(true)
  })
})

