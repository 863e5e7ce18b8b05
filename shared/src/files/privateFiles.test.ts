import { execFileSync } from 'node:child_process'
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { OperatorError } from '../operatorError.js'
import { createPrivateFileIfMissing, makePrivateDir, makePrivateFile, readOwnFile, readSecretFile } from './privateFiles.js'

const modeOf = (p: string) => (statSync(p).mode & 0o7777).toString(8)

describe('private files and directories, whatever the umask', () => {
  let saved: number
  let dir: string
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'cs-modes-'))
    saved = process.umask(0o000)
  })
  afterEach(() => {
    process.umask(saved)
  })

  it('a new directory and its new parents are 0700; an existing loose one is tightened', () => {
    const deep = path.join(dir, 'a', 'b')
    makePrivateDir(deep)
    expect([modeOf(path.join(dir, 'a')), modeOf(deep)]).toEqual(['700', '700'])
    chmodSync(deep, 0o755)
    makePrivateDir(deep)
    expect(modeOf(deep)).toBe('700')
  })

  it('a symbolic link in the directory\'s place, to a directory or to nothing, is refused and not followed', () => {
    const target = path.join(dir, 'target')
    mkdirSync(target)
    chmodSync(target, 0o755)
    for (const [link, to] of [[path.join(dir, 'link'), target], [path.join(dir, 'dangling'), path.join(dir, 'nowhere')]] as const) {
      symlinkSync(to, link)
      expect(() => makePrivateDir(link)).toThrow(OperatorError)
      expect(() => makePrivateDir(link)).toThrow(`${link} is a symbolic link: give the real directory`)
    }
    expect(modeOf(target)).toBe('755')
    expect(existsSync(path.join(dir, 'nowhere'))).toBe(false)
    // A link among the parents is followed as usual.
    makePrivateDir(path.join(dir, 'link', 'inner'))
    expect(modeOf(path.join(target, 'inner'))).toBe('700')
  })

  it('a file in the directory\'s place is refused in words', () => {
    writeFileSync(path.join(dir, 'file'), '')
    expect(() => makePrivateDir(path.join(dir, 'file'))).toThrow(`${path.join(dir, 'file')} is not a directory`)
  })

  it.skipIf(process.getuid?.() !== 0)('a directory of another user is refused and keeps its mode (as root: chown)', () => {
    const theirs = path.join(dir, 'theirs')
    mkdirSync(theirs)
    chmodSync(theirs, 0o755)
    chownSync(theirs, 12345, 12345)
    expect(() => makePrivateDir(theirs)).toThrow(`${theirs} belongs to uid 12345, not to this process's user (uid 0)`)
    expect(modeOf(theirs)).toBe('755')
  })

  it('a SQLite database created through createPrivateFileIfMissing keeps itself, -wal and -shm at 0600', () => {
    const file = path.join(dir, 'x.db')
    expect(createPrivateFileIfMissing(file)).toBe(true)
    const db = new Database(file)
    db.pragma('journal_mode = WAL')
    db.exec('CREATE TABLE t (x); INSERT INTO t VALUES (1)')
    expect([modeOf(file), modeOf(`${file}-wal`), modeOf(`${file}-shm`)]).toEqual(['600', '600', '600'])
    db.close()
  })

  it('without it, the same database would be 0644 (what the issue found)', () => {
    const file = path.join(dir, 'plain.db')
    new Database(file).close()
    expect(modeOf(file)).toBe('644')
  })

  it('an existing file keeps its mode (the shared 0660 audit log), a symlink is followed, not replaced', () => {
    const real = path.join(dir, 'shared.db')
    writeFileSync(real, '')
    chmodSync(real, 0o660)
    const link = path.join(dir, 'link.db')
    symlinkSync(real, link)
    expect(createPrivateFileIfMissing(link)).toBe(false)
    expect(modeOf(real)).toBe('660')
  })

  it('makePrivateFile tightens a loose private file and its side files', () => {
    const file = path.join(dir, 'old.db')
    for (const f of [file, `${file}-wal`, `${file}-shm`]) writeFileSync(f, '', { mode: 0o644 })
    makePrivateFile(file)
    expect([modeOf(file), modeOf(`${file}-wal`), modeOf(`${file}-shm`)]).toEqual(['600', '600', '600'])
  })
})

describe('readSecretFile', () => {
  class Refused extends Error {}
  const dir = () => mkdtempSync(path.join(os.tmpdir(), 'cs-secret-'))
  const write = (d: string, name: string, text: string, mode: number) => {
    const f = path.join(d, name)
    writeFileSync(f, text)
    chmodSync(f, mode)
    return f
  }
  const read = (file: string, env: Record<string, string> = {}) => readSecretFile(file, { variable: 'SERVICE_X_FILE', maxBytes: 16, refuse: (m) => new Refused(m), env })

  it('reads a 0600 regular file as it is', () => {
    expect(read(write(dir(), 's', 'secret\n', 0o600))).toBe('secret\n')
  })

  it('refuses, with the caller\'s error and the variable named: group or other bits, a directory, a file over the cap, a missing file', () => {
    const d = dir()
    const loose = write(d, 'loose', 'secret', 0o640)
    expect(() => read(loose)).toThrow(new Refused(`SERVICE_X_FILE ${loose} is readable by group or others (mode 640); run: chmod 600 ${loose}`))
    expect(() => read(d)).toThrow(/SERVICE_X_FILE .* is not a regular file/)
    expect(() => read(write(d, 'big', 'x'.repeat(17), 0o600))).toThrow(/is larger than 16 bytes/)
    expect(() => read(path.join(d, 'none'))).toThrow(/cannot read SERVICE_X_FILE .*: ENOENT/)
    try {
      read(loose)
    } catch (err) {
      expect(err).toBeInstanceOf(Refused)
    }
  })

  it('in systemd\'s CREDENTIALS_DIRECTORY, group bits (an ACL mask) are allowed, bits for others are not', () => {
    const d = dir()
    expect(read(write(d, 'cred', 'pin', 0o440), { CREDENTIALS_DIRECTORY: d })).toBe('pin')
    expect(() => read(write(d, 'open', 'pin', 0o444), { CREDENTIALS_DIRECTORY: d })).toThrow(/readable by group or others/)
    expect(() => read(write(dir(), 'elsewhere', 'pin', 0o440), { CREDENTIALS_DIRECTORY: d })).toThrow(/readable by group or others/)
  })
})

describe('what may stand in the place of a secret or key file', () => {
  class Refused extends Error {}
  const refuse = (m: string) => new Refused(m)
  const fifoIn = (d: string, name: string) => {
    const f = path.join(d, name)
    execFileSync('mkfifo', ['-m', '600', f])
    return f
  }

  it('readSecretFile refuses a FIFO at once (no wait for a writer) and bytes that are not UTF-8 (never mangled into U+FFFD)', () => {
    const d = mkdtempSync(path.join(os.tmpdir(), 'cs-secret-odd-'))
    expect(() => readSecretFile(fifoIn(d, 'fifo'), { variable: 'SERVICE_PASSPHRASE_FILE', maxBytes: 64, refuse })).toThrow(/SERVICE_PASSPHRASE_FILE .*fifo is not a regular file/)
    const raw = path.join(d, 'raw')
    writeFileSync(raw, Buffer.from([0x73, 0x65, 0x63, 0xe4, 0xe4]))
    chmodSync(raw, 0o600)
    expect(() => readSecretFile(raw, { variable: 'SERVICE_PASSPHRASE_FILE', maxBytes: 64, refuse })).toThrow(/is not UTF-8 text/)
  })

  it('readOwnFile: the file itself only (a symlink refused, its target untouched), a FIFO refused at once, null when missing, group and other bits cleared', () => {
    const d = mkdtempSync(path.join(os.tmpdir(), 'cs-own-'))
    const outside = path.join(mkdtempSync(path.join(os.tmpdir(), 'cs-outside-')), 'key')
    writeFileSync(outside, 'not yours')
    chmodSync(outside, 0o644)
    symlinkSync(outside, path.join(d, 'linked'))
    expect(() => readOwnFile(path.join(d, 'linked'), { maxBytes: 64, refuse, privateMode: true })).toThrow(/is a symbolic link/)
    expect(modeOf(outside)).toBe('644')
    expect(() => readOwnFile(fifoIn(d, 'fifo'), { maxBytes: 64, refuse })).toThrow(/is not a regular file/)
    expect(readOwnFile(path.join(d, 'missing'), { maxBytes: 64, refuse })).toBeNull()
    const own = path.join(d, 'own')
    writeFileSync(own, 'mine')
    chmodSync(own, 0o644)
    expect(readOwnFile(own, { maxBytes: 64, refuse, privateMode: true })?.toString()).toBe('mine')
    expect(modeOf(own)).toBe('600')
  })
})
