import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
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
