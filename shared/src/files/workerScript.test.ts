import { pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'
import { workerScriptBeside } from './workerScript.js'

describe('workerScriptBeside', () => {
  it('is the built file beside a built module, and the one in dist/ for a module run from src/ (only its last src/ moves)', () => {
    const built = new URL('../../dist/files/walCheckpoints.js', import.meta.url)
    expect(workerScriptBeside(built.href, 'walCheckpointWorker.js')).toBe(new URL('../../dist/files/walCheckpointWorker.js', import.meta.url).pathname)
    expect(workerScriptBeside(pathToFileURL('/home/src/app/shared/src/audit/auditLog.ts').href, 'auditWorker.js')).toBe('/home/src/app/shared/dist/audit/auditWorker.js')
  })
})
