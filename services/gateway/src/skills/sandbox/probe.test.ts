// The start-up probe against the real bubblewrap, a missing one, and a
// stand-in that runs the command without making any namespace.
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { probeSandbox } from './probe.js'

describe('probeSandbox', () => {
  it('accepts the real bwrap: node runs inside new PID and network namespaces', async () => {
    expect(await probeSandbox()).toEqual({ available: true })
  })

  it('a missing bwrap disables skills, naming the Debian package', async () => {
    const r = await probeSandbox({ bwrap: 'bwrap-not-installed' })
    expect(r.available).toBe(false)
    if (!r.available) {
      expect(r.message).toMatch(/^skills are disabled: /)
      expect(r.message).toMatch(/bwrap-not-installed not found on PATH/)
      expect(r.message).toMatch(/Debian package `bubblewrap`/)
    }
  })

  it('a bwrap that runs the command without namespaces is not a sandbox', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'cs-fake-bwrap-'))
    const fake = path.join(dir, 'bwrap')
    // Skips every bwrap option up to the node command (node -e …), then runs it
    // as is. The node path alone is not enough: a Node outside /usr is also
    // named earlier, in its own --ro-bind.
    writeFileSync(fake, `#!/bin/sh\nwhile ! { [ "$1" = "${process.execPath}" ] && [ "$2" = -e ]; }; do shift; done\nexec "$@"\n`)
    chmodSync(fake, 0o755)
    const r = await probeSandbox({ bwrap: fake })
    expect(r.available).toBe(false)
    if (!r.available) expect(r.message).toMatch(/without a new PID namespace/)
  })

  it('a bwrap that cannot create namespaces is reported with its own error', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'cs-fake-bwrap-'))
    const fake = path.join(dir, 'bwrap')
    writeFileSync(fake, '#!/bin/sh\necho "bwrap: No permissions to create new namespace" >&2\nexit 1\n')
    chmodSync(fake, 0o755)
    const r = await probeSandbox({ bwrap: fake })
    expect(r).toMatchObject({ available: false, message: expect.stringContaining('No permissions to create new namespace') })
  })
})
