import { execFile } from 'node:child_process'
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { PassThrough, Readable, Writable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { openAuditLog } from '@countersign/shared'
import { Keystore } from '../keystore/keystore.js'
import type { InputStream } from '../keystore/passphrase.js'
import { FAST_SCRYPT, writeVersion1 } from '../keystore/testkeys.testkit.js'
import { initSoftHsmToken } from '../pkcs11/softhsm.testkit.js'
import { auditKeyAdded, auditKeysResealed } from './keyAudit.js'
import { newPassphraseProblem } from './commands.js'
import { runKeysCli, type KeyAdded, type KeysCliOptions } from './keys.js'

const KEY = '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a'
const KEY_ADDRESS = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC'
const MNEMONIC = 'test test test test test test test test test test test junk'
const fast: KeysCliOptions = { scrypt: FAST_SCRYPT }
// New keys need a passphrase of at least 8 characters, from every source.
const PASS = 'test passphrase'

const tempDir = () => mkdtempSync(path.join(os.tmpdir(), 'cs-keys-'))

/** In-process io with a piped stdin (not a terminal). */
function piped(stdin: string, env: Record<string, string> = { SERVICE_DEMO_PASSPHRASE: PASS }) {
  let out = ''
  let err = ''
  return {
    io: {
      env,
      stdin: Object.assign(Readable.from([Buffer.from(stdin)]), { isTTY: false }) as InputStream,
      stdout: new Writable({ write: (c, _e, cb) => ((out += c), cb()) }),
      stderr: new Writable({ write: (c, _e, cb) => ((err += c), cb()) }),
    },
    out: () => out,
    err: () => err,
  }
}

/** In-process io on a stand-in terminal: `answers` are typed one per prompt. */
function terminal(answers: string[], env: Record<string, string> = {}) {
  let err = ''
  let out = ''
  const stdin = Object.assign(new PassThrough(), { isTTY: true, isRaw: false, setRawMode: () => stdin })
  const stderr = new Writable({
    write: (c, _e, cb) => {
      err += c
      if (String(c).endsWith(': ')) setImmediate(() => stdin.write(`${answers.shift() ?? ''}\r`))
      cb()
    },
  })
  return { io: { env, stdin: stdin as InputStream, stderr, stdout: new Writable({ write: (c, _e, cb) => ((out += c), cb()) }) }, err: () => err, out: () => out }
}

const recorder = () => {
  const added: KeyAdded[] = []
  return { added, onKeyAdded: async (a: KeyAdded) => void added.push(a) }
}

describe('countersign-keys: what a key file holds or is called reaches the terminal escaped', () => {
  // ESC, BEL, DEL, the C1 controls (U+009B is a terminal's CSI) and the bidi controls.
  const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/
  const list = async (dir: string) => {
    const t = piped('')
    const code = await runKeysCli(['list', '--data-dir', dir], t.io)
    return { code, all: t.out() + t.err() }
  }

  it('a file name in the keystore (found by review: it retitled and cleared the terminal)', async () => {
    const dir = tempDir()
    const keystore = path.join(dir, 'keystore')
    mkdirSync(keystore, { mode: 0o700 })
    writeFileSync(path.join(keystore, '\u001b]0;owned\u0007\u001b[2J\u001b[1;1Hkeys OK.json'), '{}', { mode: 0o600 })
    const { code, all } = await list(dir)
    expect(code).toBe(1)
    expect(all).toMatch(/is misnamed/)
    expect(all).toContain('\\u001b]0;owned\\u0007')
    expect(all).not.toMatch(CONTROL)
  })

  it('a field name and a value of a key file', async () => {
    const dir = tempDir()
    const entry = await new Keystore(path.join(dir, 'keystore')).save(KEY, PASS, { scrypt: FAST_SCRYPT })
    const json = JSON.parse(readFileSync(entry.file, 'utf8')) as Record<string, unknown>
    writeFileSync(entry.file, JSON.stringify({ ...json, '\u001b[2J\u001b[1;1Hall keys OK\u009b\u202e': 1 }))
    const field = await list(dir)
    expect(field.code).toBe(1)
    expect(field.all).toMatch(/unknown field\(s\) \\u001b\[2J/)
    expect(field.all).not.toMatch(CONTROL)
    writeFileSync(entry.file, JSON.stringify({ ...json, version: '\u009b2J' }))
    const value = await list(dir)
    expect(value.code).toBe(1)
    expect(value.all).toMatch(/version "\\u009b2J" is not supported/)
    expect(value.all).not.toMatch(CONTROL)
  })
})

describe('countersign-keys', () => {
  it('imports a key from piped stdin, prints only the address, returns {address, label}, and lists it', async () => {
    const dir = tempDir()
    const rec = recorder()
    const imp = piped(`${KEY}\n`)
    expect(await runKeysCli(['import', '--label', 'treasury', '--data-dir', dir], imp.io, { ...fast, ...rec })).toBe(0)
    expect(imp.out()).toBe(`${KEY_ADDRESS}\n`)
    expect(imp.err()).toBe('')
    expect(rec.added).toEqual([{ address: KEY_ADDRESS, label: 'treasury', source: 'private_key', file: path.join(dir, 'keystore', `${KEY_ADDRESS.toLowerCase()}.json`) }])
    const list = piped('')
    expect(await runKeysCli(['list', '--data-dir', dir], list.io)).toBe(0)
    expect(list.out()).toBe(`${KEY_ADDRESS}  treasury  keystore\n`)
    const unlocked = await new Keystore(path.join(dir, 'keystore')).unlockAll(PASS)
    expect(unlocked.map((k) => k.address)).toEqual([KEY_ADDRESS])
  })

  it('accepts a bare hex key, and refuses garbage on stdin without echoing it', async () => {
    const dir = tempDir()
    const bare = piped(KEY.slice(2))
    expect(await runKeysCli(['import', '--data-dir', dir], bare.io, fast)).toBe(0)
    expect(bare.out().trim()).toBe(KEY_ADDRESS)
    const garbage = piped('0xnot-a-key-but-secret-ish')
    expect(await runKeysCli(['import', '--data-dir', tempDir()], garbage.io, fast)).toBe(2)
    expect(garbage.err()).toBe('countersign-keys: stdin must hold one private key: 64 hex characters, with or without 0x\n')
    const again = piped(KEY)
    expect(await runKeysCli(['import', '--data-dir', dir], again.io, fast)).toBe(1)
    expect(again.err()).toMatch(`a key for ${KEY_ADDRESS} already exists`)
  })

  it('refuses an empty --data-dir instead of using the working directory', async () => {
    const cwd = process.cwd()
    const here = tempDir()
    process.chdir(here)
    try {
      const empty = piped(KEY)
      expect(await runKeysCli(['import', '--data-dir='], empty.io, fast)).toBe(1)
      expect(empty.err()).toBe('countersign-keys: --data-dir needs a directory (it was given empty)\n')
      expect(existsSync(path.join(here, 'keystore'))).toBe(false)
    } finally {
      process.chdir(cwd)
    }
  })

  it('imports from a mnemonic: index 0 is 0xf39F…2266, --index and --account select others', async () => {
    const dir = tempDir()
    const rec = recorder()
    const first = piped(`${MNEMONIC}\n`)
    expect(await runKeysCli(['import-mnemonic', '--data-dir', dir], first.io, { ...fast, ...rec })).toBe(0)
    expect(first.out()).toBe('0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266\n')
    const second = piped(MNEMONIC)
    expect(await runKeysCli(['import-mnemonic', '--index', '1', '--label', 'second', '--data-dir', dir], second.io, { ...fast, ...rec })).toBe(0)
    expect(second.out()).toBe('0x70997970C51812dc3A010C7d01b50e0d17dc79C8\n')
    const other = piped(MNEMONIC)
    expect(await runKeysCli(['import-mnemonic', '--account', '1', '--data-dir', dir], other.io, { ...fast, ...rec })).toBe(0)
    expect(rec.added.map((a) => [a.source, a.derivationPath, a.label])).toEqual([
      ['mnemonic', "m/44'/60'/0'/0/0", null],
      ['mnemonic', "m/44'/60'/0'/0/1", 'second'],
      ['mnemonic', "m/44'/60'/1'/0/0", null],
    ])
    const bad = piped('test test test test test test test test test test test test')
    expect(await runKeysCli(['import-mnemonic', '--data-dir', dir], bad.io, fast)).toBe(2)
    expect(bad.err()).toMatch(/valid English BIP-39 mnemonic: the checksum does not match/)
    expect(readdirSync(path.join(dir, 'keystore'))).toHaveLength(3)
  })

  it('generates a key at the production parameters', async () => {
    const dir = tempDir()
    const rec = recorder()
    const gen = piped('')
    expect(await runKeysCli(['generate', '--label', 'hot', '--data-dir', dir], gen.io, rec)).toBe(0)
    const address = gen.out().trim()
    expect(address).toMatch(/^0x[0-9a-fA-F]{40}$/)
    expect(rec.added).toEqual([expect.objectContaining({ address, label: 'hot', source: 'generated' })])
    const file = JSON.parse(readFileSync(path.join(dir, 'keystore', `${address.toLowerCase()}.json`), 'utf8'))
    expect(file.kdf).toMatchObject({ N: 2 ** 17, r: 8, p: 1 })
  })

  it('refuses a key or mnemonic in argv before doing anything, without echoing it', async () => {
    const dir = tempDir()
    for (const argv of [
      ['import', KEY, '--data-dir', dir],
      ['import', '--label', KEY.slice(2), '--data-dir', dir],
      ['import-mnemonic', '--label', MNEMONIC, '--data-dir', dir],
      ['import-mnemonic', ...MNEMONIC.split(' ')],
      ['generate', `--label=${KEY}`, '--data-dir', dir],
    ]) {
      const run = piped(KEY)
      expect(await runKeysCli(argv, run.io, fast)).toBe(2)
      expect(run.err()).toMatch(/^countersign-keys: refusing a secret on the command line/)
      expect(run.err()).not.toContain(KEY.slice(2, 20))
      expect(run.err()).not.toContain('junk')
    }
    expect(() => readdirSync(path.join(dir, 'keystore'))).toThrow(/ENOENT/)
  })

  it('with the key on a pipe and no passphrase source, says the passphrase must come from the env or a file', async () => {
    const dir = tempDir()
    for (const command of ['import', 'import-mnemonic']) {
      const none = piped(command === 'import' ? KEY : MNEMONIC, {})
      expect(await runKeysCli([command, '--data-dir', dir], none.io, fast)).toBe(1)
      expect(none.err()).toMatch(/stdin carries the key, so the passphrase must come from SERVICE_PASSPHRASE_FILE \(a file of mode 0600\) or SERVICE_DEMO_PASSPHRASE/)
    }
    const gen = piped('', {})
    expect(await runKeysCli(['generate', '--data-dir', dir], gen.io, fast)).toBe(1)
    expect(gen.err()).toMatch(/no keystore passphrase: set SERVICE_PASSPHRASE_FILE/)
  })

  it('takes the passphrase from SERVICE_PASSPHRASE_FILE and refuses a file of mode 0644', async () => {
    const dir = tempDir()
    const passFile = path.join(tempDir(), 'pass')
    writeFileSync(passFile, 'file passphrase\n', { mode: 0o644 })
    chmodSync(passFile, 0o644)
    const loose = piped(KEY, { SERVICE_PASSPHRASE_FILE: passFile })
    expect(await runKeysCli(['import', '--data-dir', dir], loose.io, fast)).toBe(1)
    expect(loose.err()).toBe(`countersign-keys: SERVICE_PASSPHRASE_FILE ${passFile} is readable by group or others (mode 644); run: chmod 600 ${passFile}\n`)
    chmodSync(passFile, 0o600)
    const ok = piped(KEY, { SERVICE_PASSPHRASE_FILE: passFile })
    expect(await runKeysCli(['import', '--data-dir', dir], ok.io, fast)).toBe(0)
    expect(await new Keystore(path.join(dir, 'keystore')).passphraseOpensExistingKeys('file passphrase')).toBe(true)
  })

  it('refuses a passphrase that does not open the keys already there', async () => {
    const dir = tempDir()
    expect(await runKeysCli(['import', '--data-dir', dir], piped(KEY, { SERVICE_DEMO_PASSPHRASE: 'first passphrase' }).io, fast)).toBe(0)
    const other = piped('', { SERVICE_DEMO_PASSPHRASE: 'second passphrase' })
    expect(await runKeysCli(['generate', '--data-dir', dir], other.io, fast)).toBe(1)
    expect(other.err()).toMatch(/this passphrase does not open the keys already in .*keystore; the signer unlocks every key with one passphrase/)
  })

  it('a new key needs a passphrase of at least 8 characters from every source, not only the terminal (found by review)', async () => {
    const dir = tempDir()
    const short = path.join(tempDir(), 'pass')
    writeFileSync(short, 'a\n', { mode: 0o600 })
    for (const [env, said] of [
      [{ SERVICE_DEMO_PASSPHRASE: 'seven c' }, 'SERVICE_DEMO_PASSPHRASE holds a passphrase of 7 characters; a new key needs one of at least 8 characters'],
      [{ SERVICE_PASSPHRASE_FILE: short }, `SERVICE_PASSPHRASE_FILE (${short}) holds a passphrase of 1 character; a new key needs one of at least 8 characters`],
    ] as const) {
      for (const [command, stdin] of [['generate', ''], ['import', KEY], ['import-mnemonic', MNEMONIC]] as const) {
        const run = piped(stdin, { ...env })
        expect(await runKeysCli([command, '--data-dir', dir], run.io, fast)).toBe(1)
        expect(run.err()).toContain(said)
        expect(run.err()).not.toContain('seven c')
      }
    }
    expect(new Keystore(path.join(dir, 'keystore')).list()).toEqual([])
    // Eight characters (not UTF-16 units: each of these is two) are enough.
    const eight = piped('', { SERVICE_DEMO_PASSPHRASE: '🔑'.repeat(8) })
    expect(await runKeysCli(['generate', '--data-dir', dir], eight.io, fast)).toBe(0)
    expect(newPassphraseProblem('🔑'.repeat(4), 'x')).toMatch(/^x holds a passphrase of 4 characters/)
  })

  it('a blank SERVICE_DEMO_PASSPHRASE is unset (it sealed keys with " "); both sources set is refused, naming both', async () => {
    const dir = tempDir()
    for (const blank of ['', ' ', '  \t ']) {
      const run = piped('', { SERVICE_DEMO_PASSPHRASE: blank })
      expect(await runKeysCli(['generate', '--data-dir', dir], run.io, fast)).toBe(1)
      expect(run.err()).toMatch(/no keystore passphrase: set SERVICE_PASSPHRASE_FILE/)
    }
    const passFile = path.join(tempDir(), 'pass')
    writeFileSync(passFile, 'file passphrase\n', { mode: 0o600 })
    const blankAndFile = piped('', { SERVICE_DEMO_PASSPHRASE: ' ', SERVICE_PASSPHRASE_FILE: passFile })
    expect(await runKeysCli(['generate', '--data-dir', dir], blankAndFile.io, fast)).toBe(0)
    expect(await new Keystore(path.join(dir, 'keystore')).passphraseOpensExistingKeys('file passphrase')).toBe(true)
    const both = piped(KEY, { SERVICE_DEMO_PASSPHRASE: 'demo passphrase', SERVICE_PASSPHRASE_FILE: passFile })
    expect(await runKeysCli(['import', '--data-dir', dir], both.io, fast)).toBe(1)
    expect(both.err()).toBe('countersign-keys: SERVICE_DEMO_PASSPHRASE and SERVICE_PASSPHRASE_FILE are both set: unset one of them (keep SERVICE_PASSPHRASE_FILE, a file of mode 0600, for anything but a demo)\n')
  })

  it('keys sealed earlier with a shorter passphrase still unlock and reseal with it; only new keys need 8 characters', async () => {
    const dir = tempDir()
    const keystore = new Keystore(path.join(dir, 'keystore'))
    await writeVersion1(keystore, KEY, KEY_ADDRESS, 'pw', { label: 'old', dev: false })
    const reseal = piped('', { SERVICE_DEMO_PASSPHRASE: 'pw' })
    expect(await runKeysCli(['reseal', '--data-dir', dir], reseal.io, fast)).toBe(0)
    expect(reseal.out()).toBe(`${KEY_ADDRESS}  old  resealed\n`)
    expect((await keystore.unlockAll('pw')).map((k) => k.address)).toEqual([KEY_ADDRESS])
    const add = piped('', { SERVICE_DEMO_PASSPHRASE: 'pw' })
    expect(await runKeysCli(['generate', '--data-dir', dir], add.io, fast)).toBe(1)
    expect(add.err()).toMatch(/SERVICE_DEMO_PASSPHRASE holds a passphrase of 2 characters; a new key needs one of at least 8 characters \(keys already sealed with a shorter one still unlock/)
  })

  it('on a terminal: asks for the key without echo, then the passphrase twice, and compares', async () => {
    const dir = tempDir()
    const tty = terminal([KEY, 'long passphrase', 'long passphrase'])
    expect(await runKeysCli(['import', '--data-dir', dir], tty.io, fast)).toBe(0)
    expect(tty.out()).toBe(`${KEY_ADDRESS}\n`)
    expect(tty.err()).toBe('private key (0x…): \nkeystore passphrase: \nrepeat the passphrase: \n')
    const differ = terminal(['long passphrase', 'other passphrase'])
    expect(await runKeysCli(['generate', '--data-dir', tempDir()], differ.io, fast)).toBe(1)
    expect(differ.err()).toMatch(/the two passphrases differ/)
    const short = terminal(['short'])
    expect(await runKeysCli(['generate', '--data-dir', tempDir()], short.io, fast)).toBe(1)
    expect(short.err()).toMatch(/at least 8 characters/)
  })

  it('finds the data dir in --data-dir, else SERVICE_DATA_DIR', async () => {
    const dir = tempDir()
    const run = piped(KEY, { SERVICE_DEMO_PASSPHRASE: PASS, SERVICE_DATA_DIR: dir })
    expect(await runKeysCli(['import'], run.io, fast)).toBe(0)
    expect(readdirSync(path.join(dir, 'keystore'))).toEqual([`${KEY_ADDRESS.toLowerCase()}.json`])
    const list = piped('', { SERVICE_DATA_DIR: dir })
    expect(await runKeysCli(['list', `--data-dir=${tempDir()}`], list.io)).toBe(0)
    expect(list.out()).toMatch(/^no keys in /)
  })

  it('usage errors exit 2; a malformed key file is a clear error, not a stack', async () => {
    expect(await runKeysCli([], piped('').io)).toBe(2)
    const unknown = piped('')
    expect(await runKeysCli(['export'], unknown.io)).toBe(2)
    expect(unknown.err()).toMatch(/^countersign-keys: unknown command "export"/)
    const badFlag = piped('')
    expect(await runKeysCli(['list', '--label', 'x'], badFlag.io)).toBe(2)
    expect(badFlag.err()).toMatch(/unknown option --label \(this command takes --data-dir\)/)
    const help = piped('')
    expect(await runKeysCli(['--help'], help.io)).toBe(0)
    expect(help.out()).toMatch(/^usage: countersign-keys/)
    const dir = tempDir()
    expect(await runKeysCli(['import', '--data-dir', dir], piped(KEY).io, fast)).toBe(0)
    writeFileSync(path.join(dir, 'keystore', `${KEY_ADDRESS.toLowerCase()}.json`), '{"version": 1')
    const list = piped('')
    expect(await runKeysCli(['list', '--data-dir', dir], list.io)).toBe(1)
    expect(list.err()).toBe(`countersign-keys: key file ${path.join(dir, 'keystore', `${KEY_ADDRESS.toLowerCase()}.json`)} is malformed: it is not valid JSON\n`)
  })

  it('the audit hook records key_imported with address, label and path, and no key material', async () => {
    const dir = tempDir()
    expect(await runKeysCli(['import-mnemonic', '--label', 'ops', '--data-dir', dir], piped(MNEMONIC).io, { ...fast, onKeyAdded: auditKeyAdded })).toBe(0)
    const audit = openAuditLog(path.join(dir, 'audit.db'))
    const events = audit.list({ limit: 10 })
    await audit.close()
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({
      event: 'key_imported',
      intentId: 'system',
      data: { address: '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266', label: 'ops', source: 'mnemonic', path: "m/44'/60'/0'/0/0" },
    })
    expect(JSON.stringify(events)).not.toContain('ac0974bec39a17e36ba4a6b4d238ff944bacb478')
    expect(JSON.stringify(events)).not.toContain('junk')
  })
})

describe('countersign-keys and the data directory', () => {
  const modeOf = (dir: string) => (statSync(dir).mode & 0o7777).toString(8)

  it('a command that writes creates a missing data dir 0700, as the services do; list creates nothing', async () => {
    const dir = path.join(tempDir(), 'fresh', 'data')
    const list = piped('')
    expect(await runKeysCli(['list', '--data-dir', dir], list.io)).toBe(0)
    expect(existsSync(dir)).toBe(false)
    expect(await runKeysCli(['generate', '--data-dir', dir], piped('').io, { ...fast, onKeyAdded: auditKeyAdded })).toBe(0)
    expect(modeOf(dir)).toBe('700')
    expect(existsSync(path.join(dir, 'audit.db'))).toBe(true)
  })

  it('hsm-generate on a data dir that does not exist creates it before the token key, so the key is recorded once (found by review)', async () => {
    const token = initSoftHsmToken('cs-keys-fresh')
    const conf = process.env.SOFTHSM2_CONF
    // SoftHSM reads its configuration at C_Initialize, from this process's environment.
    process.env.SOFTHSM2_CONF = token.env.SOFTHSM2_CONF
    try {
      const dir = path.join(tempDir(), 'not-yet')
      const run = piped('', { ...token.env })
      expect(await runKeysCli(['hsm-generate', '--label', 'treasury', '--data-dir', dir], run.io, { onKeyAdded: auditKeyAdded })).toBe(0)
      expect(run.err()).toBe('')
      expect(modeOf(dir)).toBe('700')
      const audit = openAuditLog(path.join(dir, 'audit.db'))
      const events = audit.list({ limit: 10 })
      await audit.close()
      expect(events.map((e) => [e.event, e.data.address, e.data.backend])).toEqual([['key_generated', run.out().trim(), 'pkcs11']])
    } finally {
      if (conf === undefined) delete process.env.SOFTHSM2_CONF
      else process.env.SOFTHSM2_CONF = conf
    }
  })

  it.skipIf(process.getuid?.() !== 0)('a data dir of another user (here 0777) is refused before any key is made or written, as the signer refuses it (as root: chown)', async () => {
    const theirs = path.join(tempDir(), 'theirs')
    mkdirSync(theirs)
    chmodSync(theirs, 0o777)
    chownSync(theirs, 65534, 65534)
    for (const [command, stdin] of [['generate', ''], ['import', KEY], ['import-mnemonic', MNEMONIC], ['reseal', '']] as const) {
      const run = piped(stdin)
      expect(await runKeysCli([command, '--data-dir', theirs], run.io, { ...fast, onKeyAdded: auditKeyAdded })).toBe(1)
      expect(run.err()).toBe(`countersign-keys: ${theirs} belongs to uid 65534, not to this process's user (uid 0): run as the directory's owner (in the systemd layout, sudo -u countersign-<process>), or give a directory of your own\n`)
      expect(run.out()).toBe('')
    }
    const hsm = piped('', { SERVICE_PKCS11_MODULE: '/nonexistent/module.so', SERVICE_PKCS11_TOKEN_LABEL: 'x', SERVICE_PKCS11_PIN_FILE: '/nonexistent/pin' })
    expect(await runKeysCli(['hsm-generate', '--label', 'x', '--data-dir', theirs], hsm.io)).toBe(1)
    expect(hsm.err()).toContain(`${theirs} belongs to uid 65534`)
    expect(readdirSync(theirs)).toEqual([])
    expect(modeOf(theirs)).toBe('777')
  })
})

describe('the compiled bin (dist/cli/keys.js)', () => {
  const bin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist/cli/keys.js')
  const run = (args: string[], stdin: string, env: Record<string, string>) =>
    new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
      const child = execFile(process.execPath, [bin, ...args], { env: { PATH: process.env.PATH ?? '', ...env } }, (error, out, err) =>
        resolve({ code: error ? (error.code as number) : 0, out, err }),
      )
      child.stdin!.end(stdin)
    })

  it('starts with a shebang, imports through a real pipe, audits, and exits', async () => {
    expect(readFileSync(bin, 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true)
    const dir = tempDir()
    const imported = await run(['import', '--label', 'piped', '--data-dir', dir], `${KEY}\n`, { SERVICE_DEMO_PASSPHRASE: 'bin passphrase' })
    expect(imported).toEqual({ code: 0, out: `${KEY_ADDRESS}\n`, err: '' })
    const listed = await run(['list'], '', { SERVICE_DATA_DIR: dir })
    expect(listed).toEqual({ code: 0, out: `${KEY_ADDRESS}  piped  keystore\n`, err: '' })
    const refused = await run(['import', KEY, '--data-dir', dir], '', {})
    expect(refused.code).toBe(2)
    expect(refused.err).not.toContain(KEY.slice(2))
    const audit = openAuditLog(path.join(dir, 'audit.db'))
    expect(audit.list({ limit: 10 }).map((e) => e.event)).toEqual(['key_imported'])
    await audit.close()
  })
})

describe('countersign-keys reseal', () => {
  it('lists version 1 files with what to run, and reseal rewrites them (dev flag and label kept, now sealed); list and the signer then take them', async () => {
    const dir = tempDir()
    const keystore = new Keystore(path.join(dir, 'keystore'))
    await writeVersion1(keystore, KEY, KEY_ADDRESS, PASS, { label: 'dev key', dev: true })
    const before = piped('')
    expect(await runKeysCli(['list', '--data-dir', dir], before.io)).toBe(0)
    expect(before.out()).toBe(`${KEY_ADDRESS}  dev key  keystore  (dev)  (version 1: run countersign-keys reseal)\n`)
    await expect(keystore.unlockAll(PASS)).rejects.toThrow(/format version 1.*run countersign-keys reseal once/)

    const wrong = piped('', { SERVICE_DEMO_PASSPHRASE: 'not it' })
    expect(await runKeysCli(['reseal', '--data-dir', dir], wrong.io, fast)).toBe(1)
    expect(wrong.err()).toMatch(/^countersign-keys: cannot unlock key 0x3C44.*: wrong passphrase, or the file was altered\n$/)

    const reseal = piped('')
    expect(await runKeysCli(['reseal', '--data-dir', dir], reseal.io, fast)).toBe(0)
    expect(reseal.out()).toBe(`${KEY_ADDRESS}  dev key  resealed  (dev)\n`)
    const after = piped('')
    expect(await runKeysCli(['list', '--data-dir', dir], after.io)).toBe(0)
    expect(after.out()).toBe(`${KEY_ADDRESS}  dev key  keystore  (dev)\n`)
    expect((await keystore.unlockAll(PASS)).map((k) => [k.address, k.dev])).toEqual([[KEY_ADDRESS, true]])
    const again = piped('')
    expect(await runKeysCli(['reseal', '--data-dir', dir], again.io, fast)).toBe(0)
    expect(again.out()).toBe(`no version 1 key files in ${path.join(dir, 'keystore')}\n`)
  })

  it('the audit hook records keys_resealed with each key as sealed (address, label, dev), once, and no key material', async () => {
    const dir = tempDir()
    const keystore = new Keystore(path.join(dir, 'keystore'))
    await writeVersion1(keystore, KEY, KEY_ADDRESS, PASS, { label: 'dev key', dev: true })
    const hooks = { ...fast, onKeysResealed: auditKeysResealed }
    expect(await runKeysCli(['reseal', '--data-dir', dir], piped('').io, hooks)).toBe(0)
    // Nothing left to reseal: nothing recorded.
    expect(await runKeysCli(['reseal', '--data-dir', dir], piped('').io, hooks)).toBe(0)
    const audit = openAuditLog(path.join(dir, 'audit.db'))
    const events = audit.list({ limit: 10 })
    await audit.close()
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({ event: 'keys_resealed', intentId: 'system', data: { keys: [{ address: KEY_ADDRESS, label: 'dev key', dev: true }] } })
    expect(JSON.stringify(events)).not.toContain(KEY.slice(2, 30))
  })

  it('a reseal whose recording fails says so and exits 1, the files staying resealed', async () => {
    const dir = tempDir()
    const keystore = new Keystore(path.join(dir, 'keystore'))
    await writeVersion1(keystore, KEY, KEY_ADDRESS, PASS, { label: 'ops', dev: false })
    const run = piped('')
    const failing = async () => {
      throw new Error('audit.db is read-only')
    }
    expect(await runKeysCli(['reseal', '--data-dir', dir], run.io, { ...fast, onKeysResealed: failing })).toBe(1)
    expect(run.err()).toBe('countersign-keys: 1 key file(s) were resealed, but recording it failed: audit.db is read-only\n')
    expect(keystore.list().map((k) => k.version)).toEqual([2])
  })
})
