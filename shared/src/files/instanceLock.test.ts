// One running service per data directory (found by review: two signers on
// one data dir both listened, and the first became unreachable).
import { spawn } from 'node:child_process'
import { mkdtempSync, statSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { OperatorError } from '../operatorError.js'
import { holdInstanceLock, type InstanceLock } from './instanceLock.js'

const held: InstanceLock[] = []
const kills: Array<() => void> = []
afterEach(() => {
  for (const l of held.splice(0)) l.release()
  for (const k of kills.splice(0)) k()
})

const dataDir = () => mkdtempSync(path.join(os.tmpdir(), 'cs-lock-'))
const hold = (dir: string, service: string) => {
  const lock = holdInstanceLock(dir, service)
  held.push(lock)
  return lock
}

describe('holdInstanceLock', () => {
  it('refuses a second holder of the same service’s lock, naming the service, the directory and the file', () => {
    const dir = dataDir()
    const first = hold(dir, 'signer')
    expect(() => holdInstanceLock(dir, 'signer')).toThrow(OperatorError)
    expect(() => holdInstanceLock(dir, 'signer')).toThrow(
      `another signer is running on the data directory ${dir} (it holds ${path.join(dir, 'signer.lock')}); stop it before starting this one: two would serve the same sockets and files`,
    )
    // Each service has its own lock; a released one can be taken again.
    hold(dir, 'gateway')
    first.release()
    hold(dir, 'signer')
    expect(statSync(path.join(dir, 'signer.lock')).mode & 0o777).toBe(0o600)
  })

  it('is held against another process, and the kernel drops it when that process is killed', async () => {
    const dir = dataDir()
    const lockModule = pathToFileURL(path.resolve('shared/dist/files/instanceLock.js')).href
    const child = spawn(
      process.execPath,
      ['--input-type=module', '-e', `import { holdInstanceLock } from ${JSON.stringify(lockModule)}; holdInstanceLock(${JSON.stringify(dir)}, 'signer'); console.log('held'); setInterval(() => {}, 1000)`],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    )
    kills.push(() => child.kill('SIGKILL'))
    await new Promise<void>((resolve, reject) => {
      child.stdout.once('data', () => resolve())
      child.once('exit', (code) => reject(new Error(`lock holder exited (${code})`)))
    })
    expect(() => holdInstanceLock(dir, 'signer')).toThrow(/another signer is running/)
    child.kill('SIGKILL')
    await new Promise((r) => child.once('exit', r))
    hold(dir, 'signer')
  })
})
