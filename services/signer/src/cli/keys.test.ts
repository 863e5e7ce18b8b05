import { mkdtempSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Readable, Writable } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { openAuditLog } from '@countersign/shared'
import { runKeysCli } from './keys.js'

function io(stdin: string, env: Record<string, string> = { SERVICE_DEMO_PASSPHRASE: 'pw' }) {
  let out = ''
  let err = ''
  const input = Readable.from([stdin]) as unknown as NodeJS.ReadStream
  return {
    io: {
      env,
      stdin: input,
      stdout: new Writable({ write: (c, _e, cb) => ((out += c), cb()) }) as unknown as NodeJS.WritableStream,
      stderr: new Writable({ write: (c, _e, cb) => ((err += c), cb()) }) as unknown as NodeJS.WritableStream,
    },
    out: () => out,
    err: () => err,
  }
}

const KEY = '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a'
const MNEMONIC = 'test test test test test test test test test test test junk'

describe('countersign-keys', () => {
  it('imports a key from piped stdin, lists it, and audits without key material', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'cs-keys-'))
    const imp = io(KEY + '\n')
    expect(await runKeysCli(['import', '--label', 'treasury', '--data-dir', dir], imp.io)).toBe(0)
    expect(imp.out().trim()).toBe('0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC')
    const list = io('')
    expect(await runKeysCli(['list', '--data-dir', dir], list.io)).toBe(0)
    expect(list.out()).toContain('0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC  treasury')
    const audit = openAuditLog(path.join(dir, 'audit.db'))
    const events = audit.list({ limit: 10 })
    await audit.close()
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({ event: 'key_imported', intentId: 'system', data: { address: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC', label: 'treasury' } })
    expect(JSON.stringify(events)).not.toContain(KEY.slice(2, 30))
  })

  it('imports from a mnemonic with account and address index', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'cs-keys-'))
    const first = io(MNEMONIC)
    expect(await runKeysCli(['import-mnemonic', '--data-dir', dir], first.io)).toBe(0)
    expect(first.out().trim()).toBe('0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266')
    const second = io(MNEMONIC)
    expect(await runKeysCli(['import-mnemonic', '--index', '1', '--data-dir', dir], second.io)).toBe(0)
    expect(second.out().trim()).toBe('0x70997970C51812dc3A010C7d01b50e0d17dc79C8')
    const bad = io('not a mnemonic at all')
    expect(await runKeysCli(['import-mnemonic', '--data-dir', dir], bad.io)).toBe(2)
    expect(bad.err()).toMatch(/valid BIP-39 mnemonic/)
  })

  it('generates a key', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'cs-keys-'))
    const gen = io('')
    expect(await runKeysCli(['generate', '--data-dir', dir], gen.io)).toBe(0)
    expect(gen.out().trim()).toMatch(/^0x[0-9a-fA-F]{40}$/)
  })

  it('refuses a key or mnemonic on the command line, and garbage on stdin', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'cs-keys-'))
    const argvKey = io('')
    expect(await runKeysCli(['import', '--label', KEY, '--data-dir', dir], argvKey.io)).toBe(2)
    expect(argvKey.err()).toMatch(/refusing a secret on the command line/)
    const argvMnemonic = io('')
    expect(await runKeysCli(['import-mnemonic', '--label', MNEMONIC, '--data-dir', dir], argvMnemonic.io)).toBe(2)
    const garbage = io('hello')
    expect(await runKeysCli(['import', '--data-dir', dir], garbage.io)).toBe(2)
    expect(garbage.err()).toMatch(/64 hex characters/)
  })

  it('without a passphrase source on a pipe, says how to give one', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'cs-keys-'))
    const none = io(KEY, {})
    expect(await runKeysCli(['import', '--data-dir', dir], none.io)).toBe(1)
    expect(none.err()).toMatch(/SERVICE_PASSPHRASE_FILE/)
  })
})
