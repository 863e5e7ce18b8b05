import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { createFileAtomic, FileExistsError, isTempName } from './atomicWrite.js'

const tempDir = () => mkdtempSync(path.join(os.tmpdir(), 'cs-atomic-'))

describe('createFileAtomic', () => {
  it('creates the file with the mode, whatever the umask allows, and leaves no temp file', () => {
    const dir = tempDir()
    const previous = process.umask(0o022)
    try {
      const file = createFileAtomic(dir, 'a.json', '{"a":1}\n', 0o600)
      expect(file).toBe(path.join(dir, 'a.json'))
      expect(readFileSync(file, 'utf8')).toBe('{"a":1}\n')
      expect(statSync(file).mode & 0o777).toBe(0o600)
      expect(statSync(file).nlink).toBe(1)
      expect(readdirSync(dir)).toEqual(['a.json'])
    } finally {
      process.umask(previous)
    }
  })

  it('never replaces an existing file, and cleans up its temp file', () => {
    const dir = tempDir()
    writeFileSync(path.join(dir, 'a.json'), 'old')
    expect(() => createFileAtomic(dir, 'a.json', 'new')).toThrow(FileExistsError)
    expect(readFileSync(path.join(dir, 'a.json'), 'utf8')).toBe('old')
    expect(readdirSync(dir)).toEqual(['a.json'])
  })

  it('of many writers racing for one name, exactly one wins', () => {
    const dir = tempDir()
    const outcomes = Array.from({ length: 20 }, (_, i) => {
      try {
        createFileAtomic(dir, 'race.json', `writer ${i}`)
        return 'won'
      } catch (err) {
        return err instanceof FileExistsError ? 'lost' : 'error'
      }
    })
    expect(outcomes.filter((o) => o === 'won')).toHaveLength(1)
    expect(outcomes.filter((o) => o === 'error')).toHaveLength(0)
    expect(readdirSync(dir)).toEqual(['race.json'])
  })

  it('names temp files so that listings can skip them', () => {
    expect(isTempName('.0xabc.json.a1b2c3.tmp')).toBe(true)
    expect(isTempName('0xabc.json')).toBe(false)
  })
})
