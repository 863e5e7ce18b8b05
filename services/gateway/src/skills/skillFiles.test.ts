import { createHash } from 'node:crypto'
import { execFileSync } from 'node:child_process'
import { chmodSync, existsSync, linkSync, mkdirSync, mkdtempSync, readdirSync, statSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { createRunRoot } from './sandbox/runRoot.js'
import { checkSkillFiles, entryOf, inspectSkillFolder, isPlainRelativePath, isRefusal, MAX_SKILL_BYTES, MAX_SKILL_FILE_BYTES, type SkillFolder } from './skillFiles.js'

const sha = (s: string) => createHash('sha256').update(s).digest('hex')

function skillsDir(files: Record<string, string> = {}): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cs-skills-'))
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, p)), { recursive: true })
    writeFileSync(path.join(dir, p), text)
  }
  return dir
}

async function folder(dir: string, name: string): Promise<SkillFolder> {
  const f = await inspectSkillFolder(dir, name)
  if (isRefusal(f)) throw new Error(f.message)
  return f
}

describe('inspectSkillFolder', () => {
  it('lists files and directories of a real folder; a missing folder is empty', async () => {
    const dir = skillsDir({ 's/index.js': 'a', 's/lib/x.js': 'b' })
    const f = await folder(dir, 's')
    expect([...f.tree].sort()).toEqual([['index.js', 'file'], ['lib', 'dir'], ['lib/x.js', 'file']])
    expect((await folder(dir, 'absent')).tree.size).toBe(0)
  })

  it('follows a symlinked SERVICE_SKILLS_DIR itself (realpath), but no link at or under a skill root', async () => {
    const dir = skillsDir({ 's/index.js': 'a' })
    const alias = path.join(mkdtempSync(path.join(os.tmpdir(), 'cs-alias-')), 'skills')
    symlinkSync(dir, alias)
    expect((await folder(alias, 's')).root).toBe(path.join(dir, 's'))
    symlinkSync('s', path.join(dir, 'link'))
    expect(await inspectSkillFolder(dir, 'link')).toMatchObject({ error: 'symlink_refused', path: 'link' })
    symlinkSync('/nonexistent', path.join(dir, 's', 'dangling'))
    expect(await inspectSkillFolder(dir, 's')).toMatchObject({ error: 'symlink_refused', path: 's/dangling' })
  })

  it('refuses a root that is a file, and special files inside', async () => {
    const dir = skillsDir({ plain: 'x', 's/index.js': 'a' })
    expect(await inspectSkillFolder(dir, 'plain')).toMatchObject({ error: 'skill_folder_refused', path: 'plain' })
    execFileSync('mkfifo', [path.join(dir, 's', 'pipe')])
    expect(await inspectSkillFolder(dir, 's')).toMatchObject({ error: 'skill_folder_refused', path: 's/pipe', message: expect.stringMatching(/neither a file nor a directory/) })
  })
})

describe('checkSkillFiles', () => {
  it('verifies declared files and returns their bytes; refuses paths that are not plain and relative', async () => {
    const dir = skillsDir({ 's/index.js': 'one', 's/lib/x.js': 'two' })
    const f = await folder(dir, 's')
    const r = await checkSkillFiles(f, [
      { path: 'index.js', sha256: sha('one') },
      { path: 'lib/x.js', sha256: sha('other') },
      { path: 'lib/../index.js', sha256: sha('one') },
      { path: './index.js', sha256: sha('one') },
      { path: 'lib', sha256: sha('') },
    ])
    expect(r.verified.map((v) => [v.path, v.bytes.toString()])).toEqual([['index.js', 'one']])
    expect(r.refused).toEqual(['lib/../index.js', './index.js'])
    expect(r.mismatches).toEqual([
      { file: 'lib/x.js', expected: sha('other'), actual: sha('two') },
      { file: 'lib', expected: sha(''), actual: null },
    ])
  })

  it('a file replaced by a link after the walk is not read through it', async () => {
    const dir = skillsDir({ 's/index.js': 'one', 'secret': 'top secret' })
    const f = await folder(dir, 's')
    // The tree still says file; the disk now has a link.
    execFileSync('rm', [path.join(dir, 's', 'index.js')])
    symlinkSync(path.join(dir, 'secret'), path.join(dir, 's', 'index.js'))
    const r = await checkSkillFiles(f, [{ path: 'index.js', sha256: sha('top secret') }])
    expect(r.verified).toEqual([])
    expect(r.mismatches).toEqual([{ file: 'index.js', expected: sha('top secret'), actual: null }])
  })

  it('a file one byte over the static analysis’s limit stops the check before it is read, naming the file and the limit', async () => {
    const big = '/'.repeat(MAX_SKILL_FILE_BYTES + 1)
    const dir = skillsDir({ 's/index.js': 'one', 's/big.js': big, 's/after.js': 'two' })
    const r = await checkSkillFiles(await folder(dir, 's'), [
      { path: 'index.js', sha256: sha('one') },
      { path: 'big.js', sha256: sha(big) },
      { path: 'after.js', sha256: sha('two') },
    ])
    expect(r.tooLarge).toEqual({ path: 'big.js', message: `big.js is ${MAX_SKILL_FILE_BYTES + 1} bytes; a skill file may have at most ${MAX_SKILL_FILE_BYTES} (the static analysis's limit). It was not read` })
    expect(MAX_SKILL_FILE_BYTES).toBe(512 * 1024)
    // Nothing after it is read either.
    expect(r.verified.map((v) => v.path)).toEqual(['index.js'])
  })

  it('a sparse file of 1 TiB is refused at once: its size comes from fstat, no byte of it is read', async () => {
    const dir = skillsDir({ 's/index.js': '' })
    truncateSync(path.join(dir, 's', 'index.js'), 2 ** 40)
    const started = performance.now()
    const r = await checkSkillFiles(await folder(dir, 's'), [{ path: 'index.js', sha256: sha('') }])
    expect(r.tooLarge?.message).toMatch(/^index\.js is 1099511627776 bytes; a skill file may have at most 524288/)
    expect(performance.now() - started).toBeLessThan(1000)
  })

  it('files at the limit, declared many times, are read only up to the per-skill budget (the OOM of review S3)', async () => {
    const full = '/'.repeat(MAX_SKILL_FILE_BYTES)
    const files: Record<string, string> = { 's/index.js': full }
    for (let i = 1; i < 24; i++) files[`s/f${i}.js`] = full
    const dir = skillsDir(files)
    const declared = Object.keys(files).map((f) => ({ path: f.slice(2), sha256: sha(full) }))
    const r = await checkSkillFiles(await folder(dir, 's'), declared)
    // 16 files fill the 8 MiB budget exactly; the 17th would go over it.
    const fit = MAX_SKILL_BYTES / MAX_SKILL_FILE_BYTES
    expect(fit).toBe(16)
    expect(r.verified).toHaveLength(fit)
    expect(r.tooLarge).toEqual({
      path: `f${fit}.js`,
      message: `f${fit}.js (${MAX_SKILL_FILE_BYTES} bytes) takes the declared files over ${MAX_SKILL_BYTES} bytes in all, the most one skill may have (${MAX_SKILL_BYTES} bytes before it). It was not read`,
    })
  })

  it('a directory that cannot be listed is refused, naming it (was a 500)', async () => {
    const dir = skillsDir({ 's/index.js': 'export function run() {}', 's/locked/x.js': '' })
    chmodSync(path.join(dir, 's', 'locked'), 0o000)
    try {
      const r = await inspectSkillFolder(dir, 's')
      // root reads any directory: there the walk goes on.
      if (process.getuid?.() === 0) expect(isRefusal(r)).toBe(false)
      else expect(r).toEqual({ error: 'skill_folder_refused', path: 's/locked', message: 's/locked cannot be listed (EACCES)' })
    } finally {
      chmodSync(path.join(dir, 's', 'locked'), 0o755)
    }
    // A path too long to list, for root too.
    mkdirSync(path.join(dir, 't'))
    writeFileSync(path.join(dir, 't', 'index.js'), '')
    // 20 levels of 250 characters, made one relative step at a time (no whole path is ever named).
    const cwd = process.cwd()
    try {
      process.chdir(path.join(dir, 't'))
      for (let i = 0; i < 20; i++) {
        mkdirSync('d'.repeat(250))
        process.chdir('d'.repeat(250))
      }
    } finally {
      process.chdir(cwd)
    }
    const r = await inspectSkillFolder(dir, 't')
    expect(r).toMatchObject({ error: 'skill_folder_refused', message: expect.stringMatching(/cannot be listed \(ENAMETOOLONG\)$/) })
  })

  it('a hard link is refused by the walk, naming it; one made after the walk is not read', async () => {
    const dir = skillsDir({ 's/index.js': 'export function run() {}', 'keystore/key.json': '{"secret":1}' })
    linkSync(path.join(dir, 'keystore', 'key.json'), path.join(dir, 's', 'k.json'))
    expect(await inspectSkillFolder(dir, 's')).toEqual({ error: 'skill_folder_refused', path: 's/k.json', message: 's/k.json is a hard link (2 names for one file); a skill folder holds its own files only' })
    // A plain file when the folder is walked, a hard link when it is read.
    execFileSync('rm', [path.join(dir, 's', 'k.json')])
    writeFileSync(path.join(dir, 's', 'k.json'), '{"secret":1}')
    const f = await folder(dir, 's')
    execFileSync('rm', [path.join(dir, 's', 'k.json')])
    linkSync(path.join(dir, 'keystore', 'key.json'), path.join(dir, 's', 'k.json'))
    const r = await checkSkillFiles(f, [{ path: 'k.json', sha256: sha('{"secret":1}') }])
    expect(r.verified).toEqual([])
  })

  it('a directory replaced by a link after the walk is not read through either', async () => {
    const dir = skillsDir({ 's/lib/x.js': 'one', 'elsewhere/x.js': 'top secret' })
    const f = await folder(dir, 's')
    execFileSync('rm', ['-r', path.join(dir, 's', 'lib')])
    symlinkSync(path.join(dir, 'elsewhere'), path.join(dir, 's', 'lib'))
    const r = await checkSkillFiles(f, [{ path: 'lib/x.js', sha256: sha('top secret') }])
    expect(r.verified).toEqual([])
  })
})

describe('paths and entry', () => {
  it('plain relative paths only', () => {
    for (const ok of ['index.js', 'lib/a.js', 'node_modules/@s/x/index.js', '.hidden']) expect(isPlainRelativePath(ok), ok).toBe(true)
    for (const bad of ['/etc/passwd', '../x', 'a/../b', './a', 'a//b', 'a/', 'a\\b', 'a\0b']) expect(isPlainRelativePath(bad), bad).toBe(false)
  })

  it('the entry is index.js when declared, else the first file', () => {
    expect(entryOf([{ path: 'a.js' }, { path: 'index.js' }])).toBe('index.js')
    expect(entryOf([{ path: 'a.js' }])).toBe('a.js')
    expect(entryOf([])).toBeUndefined()
  })
})

describe('createRunRoot', () => {
  it('holds exactly the given files, read-only, and is removed afterwards', async () => {
    const runDir = mkdtempSync(path.join(os.tmpdir(), 'cs-run-'))
    const root = await createRunRoot(runDir, [
      { path: 'index.js', bytes: Buffer.from('a') },
      { path: 'lib/x.json', bytes: Buffer.from('[1]') },
    ])
    expect(readdirSync(root.dir, { recursive: true }).map(String).sort()).toEqual(['index.js', 'lib', 'lib/x.json'])
    expect(statSync(path.join(root.dir, 'index.js')).mode & 0o777).toBe(0o400)
    expect(statSync(path.dirname(root.dir)).mode & 0o777).toBe(0o700)
    await root.remove()
    expect(existsSync(root.dir)).toBe(false)
  })

  it('refuses a path declared twice or one that is not plain, leaving nothing behind', async () => {
    const runDir = mkdtempSync(path.join(os.tmpdir(), 'cs-run-'))
    await expect(createRunRoot(runDir, [{ path: 'a.js', bytes: Buffer.from('1') }, { path: 'a.js', bytes: Buffer.from('2') }])).rejects.toThrow()
    await expect(createRunRoot(runDir, [{ path: '../escape.js', bytes: Buffer.from('1') }])).rejects.toThrow(/refusing to write/)
    expect(readdirSync(path.join(runDir, 'skill-roots'))).toEqual([])
    expect(existsSync(path.join(runDir, 'escape.js'))).toBe(false)
  })
})
