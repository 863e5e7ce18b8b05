import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { OperatorError } from '@countersign/shared'
// The launcher's (npm start, npm run demo) optional .env reader.
import { loadEnvFile } from '../scripts/env-file.mjs'

const dir = () => mkdtempSync(path.join(os.tmpdir(), 'cs-envfile-'))

describe('the .env file of npm start', () => {
  it('sets what the environment does not, strips quotes, skips comments; a missing file is no file', () => {
    const file = path.join(dir(), '.env')
    writeFileSync(file, '# comment\nSERVICE_PORT=3200\nexport SERVICE_HOST="127.0.0.1"\nSERVICE_LOG_LEVEL=debug\n')
    const env: Record<string, string | undefined> = { SERVICE_LOG_LEVEL: 'warn' }
    expect(loadEnvFile(file, env)).toEqual(['SERVICE_PORT', 'SERVICE_HOST'])
    expect(env).toEqual({ SERVICE_PORT: '3200', SERVICE_HOST: '127.0.0.1', SERVICE_LOG_LEVEL: 'warn' })
    expect(loadEnvFile(path.join(dir(), 'none'), {})).toEqual([])
  })

  it('a line that is not KEY=VALUE, or a file it cannot read, is an OperatorError naming the file (printed alone, no stack)', () => {
    const file = path.join(dir(), '.env')
    writeFileSync(file, 'SERVICE_PORT=3200\nthis is not a setting\n')
    const env = {}
    let err: unknown
    try {
      loadEnvFile(file, env)
    } catch (e) {
      err = e
    }
    expect(err).toBeInstanceOf(OperatorError)
    expect((err as Error).message).toBe(`${file}:2: expected KEY=VALUE (a # starts a comment line)`)
    const notAFile = path.join(dir(), '.env')
    mkdirSync(notAFile)
    expect(() => loadEnvFile(notAFile, {})).toThrow(new OperatorError(`cannot read ${notAFile}: EISDIR`))
  })
})
