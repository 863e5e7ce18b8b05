import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { staleSocket, tempSocketPath, useCleanups } from './rpc.testkit.js'
import { assertSocketPathFits, ensurePrivateDir, MAX_SOCKET_PATH_BYTES, prepareSocketPath, removeStaleSocket } from './socketFile.js'

const defer = useCleanups()
const mode = (p: string) => statSync(p).mode & 0o7777

describe('socket file preparation', () => {
  it('refuses a path longer than a Unix socket can have', () => {
    expect(() => assertSocketPathFits('/' + 'a'.repeat(MAX_SOCKET_PATH_BYTES - 1))).not.toThrow()
    expect(() => assertSocketPathFits('/' + 'a'.repeat(MAX_SOCKET_PATH_BYTES))).toThrow(/limited to 107/)
  })

  it('creates the directory 0700 and tightens a looser one', () => {
    const dir = path.dirname(tempSocketPath(defer))
    ensurePrivateDir(dir)
    expect(mode(dir)).toBe(0o700)
    chmodSync(dir, 0o755)
    ensurePrivateDir(dir)
    expect(mode(dir)).toBe(0o700)
  })

  it('refuses to lock down a shared sticky directory', () => {
    const dir = path.dirname(tempSocketPath(defer))
    mkdirSync(dir)
    chmodSync(dir, 0o1777)
    expect(() => ensurePrivateDir(dir)).toThrow(/shared directory/)
    expect(mode(dir)).toBe(0o1777)
  })

  // Found by review: the directory was stat'ed and chmodded through a link, and any owner accepted; whoever
  // owns the directory can swap the socket in it for their own and answer as the signer.
  it('refuses a socket directory that is a symbolic link, and leaves what it names alone', () => {
    const base = path.dirname(tempSocketPath(defer))
    const target = path.join(base, 'elsewhere')
    mkdirSync(target, { recursive: true, mode: 0o755 })
    chmodSync(target, 0o755)
    const link = path.join(base, 'run')
    symlinkSync(target, link)
    expect(() => ensurePrivateDir(link)).toThrow(/is a symbolic link/)
    expect(mode(target)).toBe(0o755)
    chmodSync(target, 0o2710)
    expect(() => ensurePrivateDir(link, 0o660)).toThrow(/is a symbolic link/)
    expect(lstatSync(link).isSymbolicLink()).toBe(true)
  })

  /** A directory of another user: as root, one handed to nobody (65534); otherwise /, which is root's. */
  function foreignDirectory(dirMode: number): string {
    if (process.getuid?.() !== 0) return '/'
    const dir = path.join(path.dirname(tempSocketPath(defer)), 'foreign')
    mkdirSync(dir, { recursive: true })
    chmodSync(dir, dirMode)
    chownSync(dir, 65534, 65534)
    return dir
  }

  it("refuses a socket directory of another user, and does not change its mode", () => {
    const dir = foreignDirectory(0o755)
    const before = mode(dir)
    expect(() => ensurePrivateDir(dir)).toThrow(/belongs to uid \d+, not to this process's user/)
    expect(mode(dir)).toBe(before)
  })

  it('takes a group socket directory of its own user or of root, not of anyone else', () => {
    const own = path.join(path.dirname(tempSocketPath(defer)), 'own')
    mkdirSync(own, { recursive: true })
    chmodSync(own, 0o2710)
    expect(() => ensurePrivateDir(own, 0o660)).not.toThrow()
    if (process.getuid?.() === 0) {
      const dir = foreignDirectory(0o2710)
      expect(() => ensurePrivateDir(dir, 0o660)).toThrow(/belongs to uid 65534, neither this process's user \(uid 0\) nor root/)
    }
  })

  it('removes a stale socket file', async () => {
    const p = tempSocketPath(defer)
    mkdirSync(path.dirname(p), { mode: 0o700 })
    await staleSocket(p)
    expect(statSync(p).isSocket()).toBe(true)
    await removeStaleSocket(p)
    expect(existsSync(p)).toBe(false)
  })

  it('leaves a socket a live server answers on', async () => {
    const p = tempSocketPath(defer)
    mkdirSync(path.dirname(p), { mode: 0o700 })
    const live = net.createServer((s) => s.end())
    await new Promise<void>((r) => live.listen(p, r))
    defer(() => new Promise((r) => live.close(r)))
    await expect(removeStaleSocket(p)).rejects.toThrow(/in use by a running server/)
    expect(statSync(p).isSocket()).toBe(true)
  })

  it('never removes what is not a socket: a regular file, a directory, a symlink', async () => {
    const p = tempSocketPath(defer)
    const dir = path.dirname(p)
    mkdirSync(dir, { mode: 0o700 })
    writeFileSync(p, 'precious')
    await expect(prepareSocketPath(p)).rejects.toThrow(/not a socket; refusing to remove it/)
    expect(readFileSync(p, 'utf8')).toBe('precious')

    const sub = path.join(dir, 'sub')
    mkdirSync(sub)
    await expect(removeStaleSocket(sub)).rejects.toThrow(/not a socket/)
    expect(statSync(sub).isDirectory()).toBe(true)

    const link = path.join(dir, 'link')
    symlinkSync(p, link)
    await expect(removeStaleSocket(link)).rejects.toThrow(/not a socket/)
    expect(readFileSync(p, 'utf8')).toBe('precious')
  })
})
