import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { bwrapArgs, MAX_RESULT_DEPTH, nestingDepth, nodeBind, permissionFlag, PROBE_TMP, ProgramNotFoundError, programPath, resultOf, SANDBOX_MAX_FILES, SANDBOX_NICENESS, sandboxArgs, sandboxCommand } from './runSkill.js'

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

  it('node runs with code generation from strings disallowed, before the harness (found by review: the Function constructor reached without naming it)', () => {
    const args = bwrapArgs(run)
    const node = args.indexOf(process.execPath, args.indexOf('--chdir'))
    const flag = args.indexOf('--disallow-code-generation-from-strings')
    expect(flag).toBeGreaterThan(node)
    expect(flag).toBeLessThan(args.lastIndexOf('/countersign/harness.mjs'))
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

  it('/tmp is a tmpfs of the memory budget, read-only without the filesystem permission; /dev and / are remounted read-only after every bind', () => {
    const at = (args: string[], ...seq: string[]) => args.findIndex((_, i) => seq.every((a, j) => args[i + j] === a))
    const closed = bwrapArgs(run)
    expect(at(closed, '--size', String(64 * 1024 * 1024), '--tmpfs', '/tmp')).toBeGreaterThan(-1)
    expect(at(closed, '--remount-ro', '/tmp')).toBeGreaterThan(-1)
    const open = bwrapArgs({ ...run, limits: { ...run.limits, memoryMb: 16, filesystem: true } })
    expect(at(open, '--size', String(16 * 1024 * 1024), '--tmpfs', '/tmp')).toBeGreaterThan(-1)
    expect(at(open, '--remount-ro', '/tmp')).toBe(-1)
    for (const args of [closed, open]) {
      const lastBind = Math.max(...['--ro-bind', '--bind'].map((b) => args.lastIndexOf(b)))
      expect(at(args, '--remount-ro', '/dev')).toBeGreaterThan(lastBind)
      expect(at(args, '--remount-ro', '/')).toBeGreaterThan(lastBind)
    }
    // The probe mounts what a run does, so an old bubblewrap without --size fails at start, not at the first run.
    expect(at(sandboxArgs(PROBE_TMP, []), '--size', String(1024 * 1024), '--tmpfs', '/tmp')).toBeGreaterThan(-1)
    expect(at(sandboxArgs(PROBE_TMP, []), '--remount-ro', '/')).toBeGreaterThan(-1)
  })
})

describe('sandboxCommand', () => {
  const bin = mkdtempSync(path.join(os.tmpdir(), 'cs-bin-'))
  const tool = (name: string, mode = 0o755) => {
    writeFileSync(path.join(bin, name), '#!/bin/sh\n')
    chmodSync(path.join(bin, name), mode)
    return path.join(bin, name)
  }

  it('runs bwrap under prlimit --nofile=64:64 and nice -n 19, all found first', () => {
    const [file, argv] = sandboxCommand('bwrap', ['--unshare-all', 'node'])
    expect(path.basename(file)).toBe('prlimit')
    expect(argv[0]).toBe(`--nofile=${SANDBOX_MAX_FILES}:${SANDBOX_MAX_FILES}`)
    expect(path.basename(argv[1]!)).toBe('nice')
    expect(argv.slice(2, 4)).toEqual(['-n', String(SANDBOX_NICENESS)])
    expect(path.basename(argv[4]!)).toBe('bwrap')
    expect(argv.slice(5)).toEqual(['--unshare-all', 'node'])
  })

  it('names the program that is missing, before anything starts', () => {
    expect(() => sandboxCommand('bwrap-not-installed', [])).toThrow(new ProgramNotFoundError('bwrap-not-installed'))
    expect(() => programPath('nice', bin)).toThrow('nice not found on PATH (coreutils, which every skill run goes through)')
  })

  it('takes the first executable file on PATH, and a path as it is', () => {
    tool('plain-file', 0o644)
    expect(() => programPath('plain-file', bin)).toThrow(ProgramNotFoundError)
    mkdirSync(path.join(bin, 'a-directory'))
    expect(() => programPath('a-directory', bin)).toThrow(ProgramNotFoundError)
    const found = tool('my-bwrap')
    expect(programPath('my-bwrap', `/nonexistent::${bin}`)).toBe(found)
    expect(programPath(found, '')).toBe(found)
    // No PATH at all: the usual directories, as spawn itself would search.
    const saved = process.env.PATH
    delete process.env.PATH
    try {
      expect(programPath('sh')).toMatch(/^\/(usr\/)?bin\/sh$/)
    } finally {
      process.env.PATH = saved
    }
    expect(() => programPath(path.join(bin, 'gone'), bin)).toThrow(`${path.join(bin, 'gone')} is not an executable file`)
  })
})

describe('the result', () => {
  const nested = (depth: number) => `{"result":${'['.repeat(depth)}${']'.repeat(depth)}}`

  it('nestingDepth counts arrays and objects over the text, not inside strings', () => {
    expect(nestingDepth('{"result":null}')).toBe(1)
    expect(nestingDepth('{"result":[{"a":[1]},[]]}')).toBe(4)
    expect(nestingDepth('{"result":"[[[[{{\\"[[["}')).toBe(1)
    expect(nestingDepth(nested(20_000))).toBe(20_001)
  })

  it(`resultOf gives the result up to ${MAX_RESULT_DEPTH} levels deep and null beyond (the answer could not be serialised), never throwing`, () => {
    expect(resultOf('{"result":{"ok":1}}\n')).toEqual({ ok: 1 })
    expect(resultOf(`${nested(MAX_RESULT_DEPTH)}\n`)).toHaveLength(1)
    for (const depth of [MAX_RESULT_DEPTH + 1, 5000, 20_000]) expect(resultOf(nested(depth))).toBeNull()
    expect(resultOf('')).toBeNull()
    expect(resultOf('{"result":')).toBeNull()
  })
})
