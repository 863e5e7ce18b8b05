import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { bwrapArgs, nodeBind, permissionFlag } from './runSkill.js'

const run = { skillRoot: '/srv/skills/s', entry: 'index.js', input: null, apiSocket: '/run/x.sock', limits: { memoryMb: 64, timeoutMs: 1000, allowSpawn: false, filesystem: false } }

describe('the sandbox on each supported Node', () => {
  it.each([
    ['v20.19.0', '--experimental-permission'],
    ['20.20.2', '--experimental-permission'],
    ['22.12.0', '--experimental-permission'],
    ['22.13.0', '--permission'],
    ['v24.21.0', '--permission'],
    ['26.0.0', '--permission'],
  ])('Node %s turns the permission model on with %s', (version, flag) => {
    expect(permissionFlag(version)).toBe(flag)
  })

  it('this Node gets the flag it knows, right after the node binary', () => {
    const args = bwrapArgs(run)
    expect(args[args.indexOf(process.execPath, args.indexOf('--chdir')) + 1]).toBe(permissionFlag(process.versions.node))
  })

  it('a Node binary outside the system directories is bound read-only at its path, after the /tmp tmpfs', () => {
    expect(nodeBind('/usr/bin/node')).toEqual([])
    // Under the temporary directory, as `npm run test:node24` unpacks Node 24: hidden by the tmpfs unless bound after it.
    const underTmp = path.join(os.tmpdir(), 'node-24/bin/node')
    expect(nodeBind(underTmp)).toEqual(['--ro-bind', underTmp, underTmp])
    const args = bwrapArgs(run)
    const at = args.findIndex((a, i) => a === '--ro-bind' && args[i + 1] === process.execPath)
    if (nodeBind(process.execPath).length === 0) expect(at).toBe(-1)
    else expect(at).toBeGreaterThan(args.indexOf('--tmpfs'))
  })
})
