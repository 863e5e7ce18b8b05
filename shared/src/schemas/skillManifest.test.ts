import { describe, expect, it } from 'vitest'
import { createAjv, listValidationErrors } from '../validation.js'
import { skillManifestSchema } from './skillManifest.js'

const validate = createAjv().compile(skillManifestSchema)
const manifest = () => ({
  version: '1',
  name: 'dca-bot',
  publisher: { name: 'Acme', address: '0x' + 'a'.repeat(40), contact: 'ops@acme.example' },
  permissions: { actions: ['swap_exact_in'], chains: [8453], network: false, filesystem: false },
  sandbox: { memoryMb: 64, timeoutMs: 5000, allowSpawn: false },
  files: [{ path: 'index.js', sha256: 'b'.repeat(64) }],
  signature: '0x' + 'c'.repeat(130),
})

describe('skillManifestSchema', () => {
  it('accepts a complete manifest', () => {
    expect(validate(manifest())).toBe(true)
  })

  it.each<[string, (m: any) => void, string]>([
    ['unknown top-level field', (m) => (m.extra = 1), "additional property 'extra'"],
    ['publisher without contact', (m) => delete m.publisher.contact, "required property 'contact'"],
    ['contact not an e-mail', (m) => (m.publisher.contact = 'acme'), 'manifest/publisher/contact'],
    ['unknown action', (m) => (m.permissions.actions = ['sign_raw']), 'manifest/permissions/actions/0'],
    ['unknown chain', (m) => (m.permissions.chains = [5]), 'manifest/permissions/chains/0'],
    ['memory above 512', (m) => (m.sandbox.memoryMb = 513), 'manifest/sandbox/memoryMb'],
    ['timeout below 1000', (m) => (m.sandbox.timeoutMs = 999), 'manifest/sandbox/timeoutMs'],
    ['timeout above 60000', (m) => (m.sandbox.timeoutMs = 60001), 'manifest/sandbox/timeoutMs'],
    ['missing allowSpawn', (m) => delete m.sandbox.allowSpawn, "required property 'allowSpawn'"],
    ['bad sha256', (m) => (m.files[0].sha256 = 'xyz'), 'manifest/files/0/sha256'],
    ['extra file field', (m) => (m.files[0].mode = 0o755), "additional property 'mode'"],
    ['short signature', (m) => (m.signature = '0x1234'), 'manifest/signature'],
    ['bad name', (m) => (m.name = '../etc'), 'manifest/name'],
  ])('rejects %s', (_n, mutate, fragment) => {
    const m = manifest()
    mutate(m)
    expect(validate(m)).toBe(false)
    expect(listValidationErrors(validate.errors).join('\n')).toContain(fragment)
  })
})
