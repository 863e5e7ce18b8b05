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

  it('a key set on two lines is refused naming both lines (it kept the first value; systemd, compose and dotenv keep the last: found by review)', () => {
    const file = path.join(dir(), '.env')
    writeFileSync(file, 'SERVICE_POLICY_FILE=/etc/countersign/old.json\n# a later override\nSERVICE_PORT=3200\nexport SERVICE_POLICY_FILE="/etc/countersign/new.json"\n')
    const env: Record<string, string | undefined> = {}
    expect(() => loadEnvFile(file, env)).toThrow(new OperatorError(`${file}:4: SERVICE_POLICY_FILE is set again (first on line 1); keep one of the two lines`))
    // Refused even when the environment sets it (neither line would be used, but the file is still wrong), and for the same value twice.
    writeFileSync(file, 'SERVICE_PORT=3200\nSERVICE_PORT=3200\n')
    expect(() => loadEnvFile(file, { SERVICE_PORT: '1' })).toThrow(`${file}:2: SERVICE_PORT is set again (first on line 1)`)
  })
})
