import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Readable } from 'node:stream'
import { recoverMessageAddress } from 'viem'
import { describe, expect, it } from 'vitest'
import { manifestHash } from '../skills/manifest.js'
import { runSkillCli } from './skill.js'

const KEY = '0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6'
const ADDRESS = '0x90F79bf6EB2c4f870365E785982E1f101E93b906'

function io(stdin: string) {
  const out: string[] = []
  const err: string[] = []
  return { io: { stdin: Readable.from([stdin]), out: (s: string) => out.push(s), err: (s: string) => err.push(s) }, out, err }
}

describe('countersign-skill', () => {
  it('fills files from the folder and signs with the key from stdin; the signature recovers the publisher', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'cs-skill-'))
    mkdirSync(path.join(dir, 'skill', 'lib'), { recursive: true })
    writeFileSync(path.join(dir, 'skill', 'index.js'), 'export function run() { return 1 }\n')
    writeFileSync(path.join(dir, 'skill', 'lib', 'util.js'), 'export const x = 1\n')
    writeFileSync(path.join(dir, 'skill', '.hidden'), 'ignored')
    const manifestFile = path.join(dir, 'manifest.json')
    writeFileSync(manifestFile, JSON.stringify({ version: '1', name: 'x', publisher: { name: 'P', address: ADDRESS, contact: 'p@example.org' }, permissions: { actions: ['transfer'], chains: [8453], network: false, filesystem: false }, sandbox: { memoryMb: 64, timeoutMs: 5000, allowSpawn: false }, files: [] }))
    const run = io(KEY + '\n')
    expect(await runSkillCli(['sign', manifestFile, '--dir', path.join(dir, 'skill')], run.io)).toBe(0)
    const signed = JSON.parse(run.out[0]!)
    expect(signed.files.map((f: { path: string }) => f.path)).toEqual(['index.js', 'lib/util.js'])
    const { signature, ...unsigned } = signed
    expect(await recoverMessageAddress({ message: { raw: manifestHash(unsigned) }, signature })).toBe(ADDRESS)
  })

  it('refuses a folder holding a symlink, naming it (the gateway would refuse it too)', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'cs-skill-'))
    mkdirSync(path.join(dir, 'lib'))
    writeFileSync(path.join(dir, 'index.js'), 'export function run() { return 1 }\n')
    symlinkSync('/etc/passwd', path.join(dir, 'lib', 'passwd.js'))
    const run = io('')
    expect(await runSkillCli(['files', dir], run.io)).toBe(1)
    expect(run.err.join('\n')).toMatch(/lib\/passwd\.js is a symlink/)
  })

  it('refuses a key that is not the publisher’s, and garbage on stdin', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'cs-skill-'))
    const manifestFile = path.join(dir, 'manifest.json')
    writeFileSync(manifestFile, JSON.stringify({ version: '1', name: 'x', publisher: { name: 'P', address: '0x0000000000000000000000000000000000000001', contact: 'p@example.org' }, permissions: { actions: [], chains: [], network: false, filesystem: false }, sandbox: { memoryMb: 64, timeoutMs: 5000, allowSpawn: false }, files: [] }))
    const wrong = io(KEY)
    expect(await runSkillCli(['sign', manifestFile, '--dir', dir], wrong.io)).toBe(1)
    expect(wrong.err.join('')).toMatch(/publisher.address is/)
    const garbage = io('not a key')
    expect(await runSkillCli(['sign', manifestFile, '--dir', dir], garbage.io)).toBe(1)
    expect(await runSkillCli([], io('').io)).toBe(2)
  })

  it('a key beyond the curve order, or a manifest without a publisher, is an error in words that never repeats the key', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'cs-skill-'))
    const manifestFile = path.join(dir, 'manifest.json')
    writeFileSync(manifestFile, JSON.stringify({ version: '1', name: 'x', publisher: { name: 'P', address: ADDRESS, contact: 'p@example.org' }, files: [] }))
    const order = `0x${'f'.repeat(64)}`
    const beyond = io(order)
    expect(await runSkillCli(['sign', manifestFile, '--dir', dir], beyond.io)).toBe(1)
    expect(beyond.err).toEqual(['countersign-skill: the key on stdin is not a valid secp256k1 private key (zero, or not below the curve order)'])
    expect(beyond.err.join('')).not.toMatch(/fffffff|115792/i)
    writeFileSync(manifestFile, JSON.stringify({ version: '1', name: 'x', files: [] }))
    const noPublisher = io(KEY)
    expect(await runSkillCli(['sign', manifestFile, '--dir', dir], noPublisher.io)).toBe(1)
    expect(noPublisher.err).toEqual(['countersign-skill: the manifest has no publisher.address to check the key against'])
    writeFileSync(manifestFile, 'null')
    const nullManifest = io(KEY)
    expect(await runSkillCli(['sign', manifestFile, '--dir', dir], nullManifest.io)).toBe(1)
    expect(nullManifest.err.join('')).toMatch(/is not a JSON object/)
  })
})
