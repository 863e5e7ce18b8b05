// The skill publisher the system tests sign manifests with, and the manifest
// they sign: one place for the fields every test skill shares.
import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { privateKeyToAccount } from 'viem/accounts'
import { hashSkillFolder, signManifest } from '../../services/gateway/dist/cli/skill.js'

export const TEST_PUBLISHER_KEY = '0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6' as const
export const testPublisher = privateKeyToAccount(TEST_PUBLISHER_KEY)

export interface TestSkillOptions {
  permissions?: { actions: string[]; chains: number[] }
  sandbox?: { memoryMb: number; timeoutMs: number; allowSpawn: boolean }
}

/** A manifest for `files`, signed by the test publisher (transfer_native on 8453, 64 MB and 10 s unless given). */
export async function signTestManifest(name: string, files: Array<{ path: string; sha256: string }>, o: TestSkillOptions = {}) {
  return signManifest(
    {
      version: '1',
      name,
      publisher: { name: 'Acme Skills', address: testPublisher.address, contact: 'ops@acme.example' },
      permissions: { ...(o.permissions ?? { actions: ['transfer_native'], chains: [8453] }), network: false, filesystem: false },
      sandbox: o.sandbox ?? { memoryMb: 64, timeoutMs: 10_000, allowSpawn: false },
      files,
    } as never,
    TEST_PUBLISHER_KEY,
  )
}

/** Writes `source` as `<skillsDir>/<name>/index.js` and signs the manifest of that folder. */
export async function writeTestSkill(skillsDir: string, name: string, source: string, o: TestSkillOptions = {}) {
  const dir = path.join(skillsDir, name)
  mkdirSync(dir, { recursive: true })
  writeFileSync(path.join(dir, 'index.js'), source)
  return signTestManifest(name, hashSkillFolder(dir), o)
}
