import { chmodSync, chownSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { OperatorError } from '../operatorError.js'
import { trustedCodeFile } from './trustedFile.js'

const refuse = (message: string) => new OperatorError(message)
const check = (file: string) => trustedCodeFile(file, 'SERVICE_PKCS11_MODULE', refuse)
const DEBIAN_SOFTHSM = '/usr/lib/softhsm/libsofthsm2.so'

describe('a file whose code the process runs (SERVICE_PKCS11_MODULE)', () => {
  let dir: string
  let module: string
  beforeEach(() => {
    // Under os.tmpdir(), a sticky directory that others may write: entries they do not own are still out of their reach.
    dir = mkdtempSync(path.join(os.tmpdir(), 'cs-module-'))
    chmodSync(dir, 0o755)
    mkdirSync(path.join(dir, 'lib'), { mode: 0o755 })
    module = path.join(dir, 'lib', 'module.so')
    copyFileSync(DEBIAN_SOFTHSM, module)
    chmodSync(module, 0o644)
  })
  afterEach(() => rmSync(dir, { recursive: true, force: true }))

  it("accepts Debian's SoftHSM module (a link into root's /usr/lib) and a root-owned copy, giving the real path", () => {
    expect(check(DEBIAN_SOFTHSM)).toMatch(/^\/usr\/lib\/.*softhsm\/libsofthsm2\.so$/)
    expect(check(module)).toBe(module)
    const link = path.join(dir, 'link.so')
    symlinkSync(module, link)
    expect(check(link)).toBe(module)
  })

  it('refuses a module that group or others can write, or that sits in a directory they can write', () => {
    chmodSync(module, 0o664)
    expect(() => check(module)).toThrow(`SERVICE_PKCS11_MODULE ${module}: the file ${module} is writable by group or others (mode 664), who could replace the module this process runs: run chmod go-w ${module}`)
    chmodSync(module, 0o644)
    chmodSync(path.join(dir, 'lib'), 0o777)
    expect(() => check(module)).toThrow(`the directory ${path.join(dir, 'lib')} is writable by group or others (mode 777)`)
    // The same directory with the sticky bit: a root-owned module in it cannot be renamed or removed by others.
    chmodSync(path.join(dir, 'lib'), 0o1777)
    expect(check(module)).toBe(module)
  })

  it.skipIf(process.getuid?.() !== 0)("refuses a module or a directory above it that belongs to another user (chown needs root)", () => {
    chownSync(module, 12345, 0)
    expect(() => check(module)).toThrow(`SERVICE_PKCS11_MODULE ${module}: the file ${module} belongs to uid 12345, who could replace the module this process runs; it must belong to root or to uid 0`)
    chownSync(module, 0, 0)
    chownSync(path.join(dir, 'lib'), 12345, 0)
    expect(() => check(module)).toThrow(`the directory ${path.join(dir, 'lib')} belongs to uid 12345`)
  })

  it('refuses a path that does not resolve, or is not a regular file, in one line', () => {
    expect(() => check(path.join(dir, 'missing.so'))).toThrow(`SERVICE_PKCS11_MODULE ${path.join(dir, 'missing.so')} cannot be resolved (ENOENT)`)
    expect(() => check(path.join(dir, 'lib'))).toThrow(/is not a regular file$/)
  })
})
