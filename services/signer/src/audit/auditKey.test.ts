import { chmodSync, lstatSync, mkdtempSync, readFileSync, statSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { checkpointSignatureValid, parseAuditPublicKey, signCheckpoint } from '@countersign/shared'
import { loadOrCreateAuditKey } from './auditKey.js'
import { checkpointDue } from './checkpointer.js'

const modeOf = (p: string) => (statSync(p).mode & 0o777).toString(8)

describe('the signer’s audit key', () => {
  it('is generated once at first start (0600), its public half beside it, and loaded unchanged afterwards', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'cs-akey-'))
    const saved = process.umask(0)
    try {
      const first = loadOrCreateAuditKey(dir)
      expect(first.created).toBe(true)
      expect([modeOf(path.join(dir, 'audit-key')), modeOf(path.join(dir, 'audit-key.pub'))]).toEqual(['600', '600'])
      const again = loadOrCreateAuditKey(dir)
      expect(again.created).toBe(false)
      expect(again.fingerprint).toBe(first.fingerprint)
      // The public file is what verify reads: it checks what the private key signs.
      const pub = parseAuditPublicKey(readFileSync(path.join(dir, 'audit-key.pub'), 'utf8'))
      expect(checkpointSignatureValid(pub, 7, '0xab', signCheckpoint(first.privateKey, 7, '0xab'))).toBe(true)
      expect(checkpointSignatureValid(pub, 8, '0xab', signCheckpoint(first.privateKey, 7, '0xab'))).toBe(false)
    } finally {
      process.umask(saved)
    }
  })

  it('rewrites a missing or replaced audit-key.pub from the private key', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'cs-akey-'))
    const key = loadOrCreateAuditKey(dir)
    const pubFile = path.join(dir, 'audit-key.pub')
    unlinkSync(pubFile)
    loadOrCreateAuditKey(dir)
    expect(readFileSync(pubFile, 'utf8')).toBe(key.publicPem)
    writeFileSync(pubFile, 'not the key')
    loadOrCreateAuditKey(dir)
    expect(readFileSync(pubFile, 'utf8')).toBe(key.publicPem)
  })

  it('refuses a private key file that is not an Ed25519 PEM key', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'cs-akey-'))
    writeFileSync(path.join(dir, 'audit-key'), 'garbage', { mode: 0o600 })
    expect(() => loadOrCreateAuditKey(dir)).toThrow(/not a PEM private key/)
  })
})

describe('when a checkpoint is due', () => {
  it('at the first event, after 100 events, or after 10 s with anything new', () => {
    expect(checkpointDue(0, null, 0)).toBe(false)
    expect(checkpointDue(1, null, 0)).toBe(true)
    const last = { seq: 50, writtenAt: 1_000 }
    expect(checkpointDue(50, last, 60_000)).toBe(false)
    expect(checkpointDue(149, last, 2_000)).toBe(false)
    expect(checkpointDue(150, last, 2_000)).toBe(true)
    expect(checkpointDue(51, last, 10_999)).toBe(false)
    expect(checkpointDue(51, last, 11_000)).toBe(true)
  })

  it('refuses an audit-key that is a symlink (a key elsewhere is neither used nor chmodded) and never writes audit-key.pub through a link', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'cs-audit-key-link-'))
    const elsewhere = mkdtempSync(path.join(os.tmpdir(), 'cs-audit-key-elsewhere-'))
    loadOrCreateAuditKey(elsewhere)
    chmodSync(path.join(elsewhere, 'audit-key'), 0o644)
    symlinkSync(path.join(elsewhere, 'audit-key'), path.join(dir, 'audit-key'))
    expect(() => loadOrCreateAuditKey(dir)).toThrow(/audit-key is a symbolic link/)
    expect(statSync(path.join(elsewhere, 'audit-key')).mode & 0o777).toBe(0o644)
    // audit-key.pub as a link to a file elsewhere: replaced by the file itself, the target left as it was.
    const own = mkdtempSync(path.join(os.tmpdir(), 'cs-audit-key-pub-'))
    const target = path.join(elsewhere, 'victim')
    writeFileSync(target, 'unchanged')
    symlinkSync(target, path.join(own, 'audit-key.pub'))
    const key = loadOrCreateAuditKey(own)
    expect(readFileSync(target, 'utf8')).toBe('unchanged')
    expect(lstatSync(path.join(own, 'audit-key.pub')).isFile()).toBe(true)
    expect(readFileSync(path.join(own, 'audit-key.pub'), 'utf8')).toBe(key.publicPem)
  })
})
