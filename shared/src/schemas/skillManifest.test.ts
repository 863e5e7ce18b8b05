import { describe, expect, it } from 'vitest'
import { ACTION_TYPES } from '../actions/index.js'
import { SUPPORTED_CHAIN_IDS } from '../types.js'
import { createAjv, listValidationErrors } from '../validation.js'
import { skillManifestSchema } from './skillManifest.js'

const validate = createAjv().compile(skillManifestSchema)
const validateAll = createAjv({ allErrors: true }).compile(skillManifestSchema)
const manifest = (): Record<string, any> => ({
  version: '1',
  name: 'dca-bot',
  publisher: { name: 'Acme', address: '0x' + 'a'.repeat(40), contact: 'ops@acme.example' },
  permissions: { actions: ['swap_exact_in'], chains: [8453], network: false, filesystem: false },
  sandbox: { memoryMb: 64, timeoutMs: 5000, allowSpawn: false },
  files: [{ path: 'index.js', sha256: 'b'.repeat(64) }],
  signature: '0x' + 'c'.repeat(130),
})
const mutated = (mutate: (m: Record<string, any>) => void) => {
  const m = manifest()
  mutate(m)
  return m
}

describe('skillManifestSchema', () => {
  it('accepts a complete manifest', () => {
    expect(validate(manifest())).toBe(true)
  })

  it.each<[string, (m: Record<string, any>) => void]>([
    ['every action and chain', (m) => ((m.permissions.actions = [...ACTION_TYPES]), (m.permissions.chains = [...SUPPORTED_CHAIN_IDS]))],
    ['no actions, no chains, no files', (m) => ((m.permissions.actions = []), (m.permissions.chains = []), (m.files = []))],
    ['the smallest sandbox', (m) => (m.sandbox = { memoryMb: 1, timeoutMs: 1000, allowSpawn: true })],
    ['the largest sandbox', (m) => (m.sandbox = { memoryMb: 512, timeoutMs: 60000, allowSpawn: false })],
    ['a fractional memory limit', (m) => (m.sandbox.memoryMb = 1.5)],
    ['a 64-character name', (m) => (m.name = 'a' + 'b.c_d-'.repeat(10) + 'xyz')],
    ['a one-character name', (m) => (m.name = '7')],
    ['256 files', (m) => (m.files = Array.from({ length: 256 }, (_, i) => ({ path: `f${i}.js`, sha256: 'd'.repeat(64) })))],
    ['a mixed-case signature and address', (m) => ((m.signature = '0x' + 'aB'.repeat(65)), (m.publisher.address = '0x' + 'Ab'.repeat(20)))],
  ])('accepts %s', (_n, mutate) => {
    const m = mutated(mutate)
    expect(validate(m), listValidationErrors(validate.errors).join('\n')).toBe(true)
  })

  it.each<[string, (m: Record<string, any>) => void, string]>([
    ['unknown top-level field', (m) => (m.extra = 1), "manifest must NOT have additional property 'extra'"],
    ['unknown publisher field', (m) => (m.publisher.url = 'https://x'), "manifest/publisher must NOT have additional property 'url'"],
    ['unknown permissions field', (m) => (m.permissions.signRaw = true), "manifest/permissions must NOT have additional property 'signRaw'"],
    ['unknown sandbox field', (m) => (m.sandbox.cpu = 2), "manifest/sandbox must NOT have additional property 'cpu'"],
    ['extra file field', (m) => (m.files[0].mode = 0o755), "manifest/files/0 must NOT have additional property 'mode'"],
    ['version 2', (m) => (m.version = '2'), 'manifest/version must be equal to constant'],
    ['publisher without contact', (m) => delete m.publisher.contact, "manifest/publisher must have required property 'contact'"],
    ['contact not an e-mail', (m) => (m.publisher.contact = 'acme'), 'manifest/publisher/contact must match format "email"'],
    ['empty publisher name', (m) => (m.publisher.name = ''), 'manifest/publisher/name'],
    ['publisher name over 128 chars', (m) => (m.publisher.name = 'n'.repeat(129)), 'manifest/publisher/name'],
    ['bad publisher address', (m) => (m.publisher.address = '0x' + 'a'.repeat(39)), 'manifest/publisher/address must match pattern'],
    ['unknown action', (m) => (m.permissions.actions = ['sign_raw']), 'manifest/permissions/actions/0 must be equal to one of the allowed values'],
    ['repeated action', (m) => (m.permissions.actions = ['approve', 'approve']), 'manifest/permissions/actions must NOT have duplicate items'],
    ['unknown chain', (m) => (m.permissions.chains = [5]), 'manifest/permissions/chains/0 must be equal to one of the allowed values'],
    ['chain as a string', (m) => (m.permissions.chains = ['8453']), 'manifest/permissions/chains/0 must be integer'],
    ['repeated chain', (m) => (m.permissions.chains = [1, 1]), 'manifest/permissions/chains must NOT have duplicate items'],
    ['network as a string', (m) => (m.permissions.network = 'no'), 'manifest/permissions/network must be boolean'],
    ['missing filesystem', (m) => delete m.permissions.filesystem, "manifest/permissions must have required property 'filesystem'"],
    ['memory 0', (m) => (m.sandbox.memoryMb = 0), 'manifest/sandbox/memoryMb must be >= 1'],
    ['memory above 512', (m) => (m.sandbox.memoryMb = 513), 'manifest/sandbox/memoryMb must be <= 512'],
    ['memory as a string', (m) => (m.sandbox.memoryMb = '64'), 'manifest/sandbox/memoryMb must be number'],
    ['timeout below 1000', (m) => (m.sandbox.timeoutMs = 999), 'manifest/sandbox/timeoutMs must be >= 1000'],
    ['timeout above 60000', (m) => (m.sandbox.timeoutMs = 60001), 'manifest/sandbox/timeoutMs must be <= 60000'],
    ['missing allowSpawn', (m) => delete m.sandbox.allowSpawn, "manifest/sandbox must have required property 'allowSpawn'"],
    ['files not an array', (m) => (m.files = { 'index.js': 'b'.repeat(64) }), 'manifest/files must be array'],
    ['257 files', (m) => (m.files = Array.from({ length: 257 }, (_, i) => ({ path: `f${i}.js`, sha256: 'd'.repeat(64) }))), 'manifest/files must NOT have more than 256 items'],
    ['bad sha256', (m) => (m.files[0].sha256 = 'xyz'), 'manifest/files/0/sha256 must match pattern'],
    ['upper-case sha256', (m) => (m.files[0].sha256 = 'B'.repeat(64)), 'manifest/files/0/sha256'],
    ['0x-prefixed sha256', (m) => (m.files[0].sha256 = '0x' + 'b'.repeat(64)), 'manifest/files/0/sha256'],
    ['empty file path', (m) => (m.files[0].path = ''), 'manifest/files/0/path'],
    ['file path over 512 chars', (m) => (m.files[0].path = 'p'.repeat(513)), 'manifest/files/0/path'],
    ['file without sha256', (m) => delete m.files[0].sha256, "manifest/files/0 must have required property 'sha256'"],
    ['short signature', (m) => (m.signature = '0x1234'), 'manifest/signature must match pattern'],
    ['signature one hex digit too long', (m) => (m.signature = '0x' + 'c'.repeat(131)), 'manifest/signature'],
    ['signature without 0x', (m) => (m.signature = 'c'.repeat(130)), 'manifest/signature'],
    ['bad name', (m) => (m.name = '../etc'), 'manifest/name must match pattern'],
    ['name starting with a dot', (m) => (m.name = '.hidden'), 'manifest/name'],
    ['upper-case name', (m) => (m.name = 'DcaBot'), 'manifest/name'],
    ['65-character name', (m) => (m.name = 'a'.repeat(65)), 'manifest/name'],
  ])('rejects %s', (_n, mutate, fragment) => {
    const m = mutated(mutate)
    expect(validate(m)).toBe(false)
    expect(listValidationErrors(validate.errors).join('\n')).toContain(fragment)
  })

  it.each(['version', 'name', 'publisher', 'permissions', 'sandbox', 'files', 'signature'])('requires %s', (field) => {
    const m = mutated((x) => delete x[field])
    expect(validate(m)).toBe(false)
    expect(listValidationErrors(validate.errors)).toEqual([`manifest must have required property '${field}'`])
  })

  it('lists every failing path, one string each, for the registration response', () => {
    const m = mutated((x) => {
      x.name = 'Bad Name'
      x.sandbox.memoryMb = 4096
      x.files[0].sha256 = 'nope'
    })
    expect(validateAll(m)).toBe(false)
    const list = listValidationErrors(validateAll.errors)
    expect(list).toHaveLength(3)
    expect(list.join('\n')).toMatch(/manifest\/name[\s\S]*manifest\/sandbox\/memoryMb[\s\S]*manifest\/files\/0\/sha256/)
  })

  it('keeps its enums in step with types.ts', () => {
    const { actions, chains } = skillManifestSchema.properties.permissions.properties
    expect([...actions.items.enum]).toEqual([...ACTION_TYPES])
    expect([...chains.items.enum]).toEqual([...SUPPORTED_CHAIN_IDS])
  })
})
