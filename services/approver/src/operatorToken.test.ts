import { chmodSync, mkdtempSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { loadOrCreateOperatorToken, OPERATOR_TOKEN_FILE } from './operatorToken.js'

const tempDir = () => mkdtempSync(path.join(os.tmpdir(), 'cs-token-'))

describe('the operator token file', () => {
  it('is generated once, 0600, and read back at the next start', () => {
    const dir = tempDir()
    const first = loadOrCreateOperatorToken(dir, null)
    expect(first.token.length).toBeGreaterThanOrEqual(32)
    expect(first.file).toBe(path.join(dir, OPERATOR_TOKEN_FILE))
    expect(statSync(first.file!).mode & 0o777).toBe(0o600)
    expect(loadOrCreateOperatorToken(dir, null).token).toBe(first.token)
  })

  it('replaces a token shorter than 32 characters (the old code failed with EEXIST and kept it)', () => {
    const dir = tempDir()
    const file = path.join(dir, OPERATOR_TOKEN_FILE)
    writeFileSync(file, 'short-token\n', { mode: 0o644 })
    const loaded = loadOrCreateOperatorToken(dir, null)
    expect(loaded.token).not.toBe('short-token')
    expect(loaded.token.length).toBeGreaterThanOrEqual(32)
    expect(readFileSync(file, 'utf8').trim()).toBe(loaded.token)
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(loadOrCreateOperatorToken(dir, null).token).toBe(loaded.token)
  })

  it('replaces a file token with spaces in it: it could not be sent as a bearer token', () => {
    const dir = tempDir()
    writeFileSync(path.join(dir, OPERATOR_TOKEN_FILE), `${'a'.repeat(20)} ${'b'.repeat(20)}\n`, { mode: 0o600 })
    expect(loadOrCreateOperatorToken(dir, null).token).toMatch(/^[A-Za-z0-9_-]{43}$/)
  })

  it('uses SERVICE_OPERATOR_TOKEN (checked at start) without touching the file', () => {
    const dir = tempDir()
    expect(loadOrCreateOperatorToken(dir, 'z'.repeat(40))).toEqual({ token: 'z'.repeat(40), file: null })
  })

  it('refuses an operator-token that is a symlink: a file elsewhere is neither taken for the token nor chmodded', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'cs-optoken-link-'))
    const outside = path.join(mkdtempSync(path.join(os.tmpdir(), 'cs-optoken-outside-')), 'other')
    writeFileSync(outside, 'x'.repeat(40))
    chmodSync(outside, 0o644)
    symlinkSync(outside, path.join(dir, OPERATOR_TOKEN_FILE))
    expect(() => loadOrCreateOperatorToken(dir, null)).toThrow(/operator token: .*operator-token is a symbolic link/)
    expect(statSync(outside).mode & 0o777).toBe(0o644)
  })
})
