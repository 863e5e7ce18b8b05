import { chmodSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { PassThrough, Writable } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { configuredPassphraseSource, PassphraseError, promptHidden, readPassphraseFile, resolvePassphrase, type InputStream } from './passphrase.js'

const pipe = () => Object.assign(new PassThrough(), { isTTY: false }) as InputStream
const sink = () => {
  let text = ''
  const stream = new Writable({ write: (c, _e, cb) => ((text += c), cb()) })
  return { stream, text: () => text }
}

/** A stand-in terminal: records raw-mode switches; the test types into it. */
function fakeTty() {
  const modes: boolean[] = []
  const stream = Object.assign(new PassThrough(), {
    isTTY: true,
    isRaw: false,
    setRawMode(raw: boolean) {
      modes.push(raw)
      this.isRaw = raw
      return this
    },
  })
  return { stdin: stream as InputStream, modes, type: (text: string) => stream.write(Buffer.from(text, 'utf8')) }
}

function passFile(content: string, mode: number): string {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'cs-pass-')), 'passphrase')
  writeFileSync(file, content, { mode })
  chmodSync(file, mode)
  return file
}

describe('resolvePassphrase', () => {
  it('takes SERVICE_DEMO_PASSPHRASE or SERVICE_PASSPHRASE_FILE, and refuses both set rather than let one silently win (found by review)', async () => {
    const file = passFile('from file\n', 0o600)
    const stderr = sink().stream
    expect(await resolvePassphrase({ env: { SERVICE_DEMO_PASSPHRASE: 'demo' }, stdin: pipe(), stderr })).toBe('demo')
    expect(await resolvePassphrase({ env: { SERVICE_PASSPHRASE_FILE: file }, stdin: pipe(), stderr })).toBe('from file')
    const both = resolvePassphrase({ env: { SERVICE_DEMO_PASSPHRASE: 'demo', SERVICE_PASSPHRASE_FILE: file }, stdin: pipe(), stderr })
    await expect(both).rejects.toThrow(PassphraseError)
    await expect(resolvePassphrase({ env: { SERVICE_DEMO_PASSPHRASE: 'demo', SERVICE_PASSPHRASE_FILE: file }, stdin: pipe(), stderr })).rejects.toThrow(
      'SERVICE_DEMO_PASSPHRASE and SERVICE_PASSPHRASE_FILE are both set: unset one of them',
    )
    // A blank variable is unset, so the other one is the only source.
    expect(await resolvePassphrase({ env: { SERVICE_DEMO_PASSPHRASE: '  ', SERVICE_PASSPHRASE_FILE: file }, stdin: pipe(), stderr })).toBe('from file')
    expect(await resolvePassphrase({ env: { SERVICE_DEMO_PASSPHRASE: 'demo', SERVICE_PASSPHRASE_FILE: ' ' }, stdin: pipe(), stderr })).toBe('demo')
  })

  it('a blank or whitespace-only SERVICE_DEMO_PASSPHRASE is unset; a set one is taken exactly, spaces at its ends included', () => {
    for (const blank of [' ', '\t', '   ']) expect(configuredPassphraseSource({ SERVICE_DEMO_PASSPHRASE: blank })).toBeNull()
    expect(configuredPassphraseSource({ SERVICE_DEMO_PASSPHRASE: ' two words ' })).toEqual({ passphrase: ' two words ', source: 'SERVICE_DEMO_PASSPHRASE' })
    const file = passFile('from file\n', 0o600)
    expect(configuredPassphraseSource({ SERVICE_PASSPHRASE_FILE: file })).toEqual({ passphrase: 'from file', source: `SERVICE_PASSPHRASE_FILE (${file})` })
  })

  it('without a source on a pipe, says how to give one', async () => {
    const err = resolvePassphrase({ env: {}, stdin: pipe(), stderr: sink().stream })
    await expect(err).rejects.toThrow(PassphraseError)
    await expect(resolvePassphrase({ env: { SERVICE_DEMO_PASSPHRASE: '' }, stdin: pipe(), stderr: sink().stream })).rejects.toThrow(
      /SERVICE_PASSPHRASE_FILE .*SERVICE_DEMO_PASSPHRASE.*terminal/,
    )
  })

  it('asks on a terminal, without echo', async () => {
    const tty = fakeTty()
    const stderr = sink()
    const result = resolvePassphrase({ env: {}, stdin: tty.stdin, stderr: stderr.stream })
    tty.type('s3cret\r')
    expect(await result).toBe('s3cret')
    expect(stderr.text()).toBe('keystore passphrase: \n')
    expect(tty.modes).toEqual([true, false])
  })
})

describe('readPassphraseFile', () => {
  it('drops exactly one trailing newline (LF or CRLF) and nothing else', () => {
    expect(readPassphraseFile(passFile('  two words  \n', 0o600))).toBe('  two words  ')
    expect(readPassphraseFile(passFile('crlf\r\n', 0o400))).toBe('crlf')
    expect(readPassphraseFile(passFile('two newlines\n\n', 0o600))).toBe('two newlines\n')
    expect(readPassphraseFile(passFile('no newline', 0o600))).toBe('no newline')
  })

  it('refuses a file group or others may read (0644, 0640, 0604) with the fix in the message', () => {
    for (const mode of [0o644, 0o640, 0o604]) {
      const file = passFile('secret\n', mode)
      expect(() => readPassphraseFile(file)).toThrow(PassphraseError)
      expect(() => readPassphraseFile(file)).toThrow(
        `SERVICE_PASSPHRASE_FILE ${file} is readable by group or others (mode ${mode.toString(8)}); run: chmod 600 ${file}`,
      )
    }
  })

  it('refuses a missing, empty or non-regular file; follows a symlink to a 0600 file', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'cs-pass-'))
    expect(() => readPassphraseFile(path.join(dir, 'nope'))).toThrow(/cannot read SERVICE_PASSPHRASE_FILE .*ENOENT/)
    expect(() => readPassphraseFile(passFile('\n', 0o600))).toThrow(/is empty/)
    chmodSync(dir, 0o700)
    expect(() => readPassphraseFile(dir)).toThrow(/not a regular file/)
    const target = passFile('linked\n', 0o600)
    const link = path.join(dir, 'link')
    symlinkSync(target, link)
    expect(readPassphraseFile(link)).toBe('linked')
  })
})

describe('promptHidden', () => {
  it('handles backspace and Ctrl-U, input split across chunks, and multi-byte characters', async () => {
    const tty = fakeTty()
    const result = promptHidden({ stdin: tty.stdin, stderr: sink().stream }, '> ')
    tty.type('abX\u007fc')
    tty.type('\u0015pä')
    const euro = Buffer.from('€', 'utf8')
    ;(tty.stdin as PassThrough).write(euro.subarray(0, 1))
    ;(tty.stdin as PassThrough).write(Buffer.concat([euro.subarray(1), Buffer.from('s\n')]))
    expect(await result).toBe('pä€s')
    expect(tty.stdin.isRaw).toBe(false)
  })

  it('Ctrl-C and Ctrl-D cancel and restore the terminal; a pipe cannot be prompted', async () => {
    for (const key of ['\u0003', '\u0004']) {
      const tty = fakeTty()
      const result = promptHidden({ stdin: tty.stdin, stderr: sink().stream }, '> ')
      tty.type(`abc${key}`)
      await expect(result).rejects.toThrow('cancelled')
      expect(tty.modes).toEqual([true, false])
    }
    await expect(promptHidden({ stdin: pipe(), stderr: sink().stream }, '> ')).rejects.toThrow(/not a terminal/)
  })

  it('two prompts in a row on one terminal each get their own line', async () => {
    const tty = fakeTty()
    const io = { stdin: tty.stdin, stderr: sink().stream }
    const first = promptHidden(io, '1: ')
    tty.type('one\r')
    expect(await first).toBe('one')
    const second = promptHidden(io, '2: ')
    tty.type('two\r')
    expect(await second).toBe('two')
  })
})

describe('a systemd credential', () => {
  it('is accepted with an ACL mask in the group bits (0440) inside $CREDENTIALS_DIRECTORY, and only there', async () => {
    const { mkdtempSync: mk, writeFileSync: wr, chmodSync: ch } = await import('node:fs')
    const os = await import('node:os')
    const p = await import('node:path')
    const creds = mk(p.join(os.tmpdir(), 'cs-cred-'))
    const file = p.join(creds, 'passphrase')
    wr(file, 'from systemd\n')
    ch(file, 0o440)
    expect(readPassphraseFile(file, { CREDENTIALS_DIRECTORY: creds })).toBe('from systemd')
    expect(() => readPassphraseFile(file, {})).toThrow(/readable by group or others/)
    ch(file, 0o444)
    expect(() => readPassphraseFile(file, { CREDENTIALS_DIRECTORY: creds })).toThrow(/readable by group or others/)
  })
})
