// Configuration at start, on the real processes: where the approver listens,
// and bad values refused naming the right variable, printed without a stack.
import { readFileSync } from 'node:fs'
import { afterEach, describe, expect, it } from 'vitest'
import { freePort, spawnService, type ServiceProcess } from './support/processes.js'
import { entries, Stack } from './support/stack.js'

/** The IPv4 addresses listening on `port`, from /proc/net/tcp (state 0A is LISTEN). */
function listeningAddresses(port: number): string[] {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0')
  return readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .filter((cols) => cols[1]?.endsWith(`:${hexPort}`) && cols[3] === '0A')
    .map((cols) => {
      const hex = cols[1]!.split(':')[0]!
      return [6, 4, 2, 0].map((i) => parseInt(hex.slice(i, i + 2), 16)).join('.')
    })
}

const started: ServiceProcess[] = []
afterEach(async () => {
  await Promise.all(started.splice(0).map((p) => p.stop()))
})

describe('where the approver listens', () => {
  it('SERVICE_HOST=0.0.0.0 exposes the gateway only: the approver stays on 127.0.0.1', async () => {
    const stack = new Stack({})
    const port = await freePort()
    const approver = spawnService('approver-host', entries.approver, { ...stack.env, SERVICE_HOST: '0.0.0.0', SERVICE_APPROVER_PORT: String(port) })
    started.push(approver)
    await approver.waitForLine(/approver ready/, 20_000)
    expect(listeningAddresses(port)).toEqual(['127.0.0.1'])
  })

  it('SERVICE_APPROVER_HOST moves it', async () => {
    const stack = new Stack({})
    const port = await freePort()
    const approver = spawnService('approver-host-set', entries.approver, { ...stack.env, SERVICE_APPROVER_HOST: '0.0.0.0', SERVICE_APPROVER_PORT: String(port) })
    started.push(approver)
    await approver.waitForLine(/approver ready/, 20_000)
    expect(listeningAddresses(port)).toEqual(['0.0.0.0'])
  })
})

describe('bad values are refused at start, naming the variable and its form, without a stack', () => {
  const refusedBy = async (name: string, entry: string, env: Record<string, string>): Promise<string> => {
    const stack = new Stack({})
    const p = spawnService(name, entry, { ...stack.env, ...env })
    expect(await p.exited()).toBe(1)
    const out = p.output()
    expect(out).not.toMatch(/\n\s+at /) // no stack frames
    return out
  }

  it('approver: SERVICE_APPROVER_PORT=abc', async () => {
    expect(await refusedBy('approver-bad-port', entries.approver, { SERVICE_APPROVER_PORT: 'abc' })).toContain('SERVICE_APPROVER_PORT must be a port number from 1 to 65535; got "abc"')
  })

  it('approver: SERVICE_CLI_APPROVAL_TIMEOUT_MS=abc', async () => {
    expect(await refusedBy('approver-bad-timeout', entries.approver, { SERVICE_APPROVAL_MODE: 'cli', SERVICE_CLI_APPROVAL_TIMEOUT_MS: 'abc' })).toContain(
      'SERVICE_CLI_APPROVAL_TIMEOUT_MS must be a whole number from 1000 to 3600000 (milliseconds); got "abc"',
    )
  })

  it('approver: an operator token shorter than 32 characters, never echoed', async () => {
    const out = await refusedBy('approver-short-token', entries.approver, { SERVICE_OPERATOR_TOKEN: 'letmein-letmein' })
    expect(out).toContain('SERVICE_OPERATOR_TOKEN must be 32 to 1024 printable characters')
    expect(out).not.toContain('letmein')
  })

  it('gateway: SERVICE_PORT=abc', async () => {
    expect(await refusedBy('gateway-bad-port', entries.gateway, { SERVICE_PORT: 'abc' })).toContain('SERVICE_PORT must be a port number from 1 to 65535; got "abc"')
  })

  it('signer: SERVICE_SOCKET_MODE=0666', async () => {
    expect(await refusedBy('signer-bad-mode', entries.signer, { SERVICE_SOCKET_MODE: '0666' })).toContain('SERVICE_SOCKET_MODE must be 0600 or 0660; got "0666"')
  })
})

describe('a SERVICE_* name no process reads is named at start, with the setting it was likely meant as', () => {
  it.each([
    ['gateway', entries.gateway, { SERVICE_PROT: '3100', SERVICE_PORT: 'abc' }, 'SERVICE_PROT', 'SERVICE_PORT'],
    ['approver', entries.approver, { SERVICE_APROVAL_MODE: 'web', SERVICE_APPROVER_PORT: 'abc' }, 'SERVICE_APROVAL_MODE', 'SERVICE_APPROVAL_MODE'],
    ['signer', entries.signer, { SERVICE_PASSPHRASE_FIEL: '/run/secret', SERVICE_SOCKET_MODE: '0666' }, 'SERVICE_PASSPHRASE_FIEL', 'SERVICE_PASSPHRASE_FILE'],
  ] as const)('%s: warned before the refusal it may explain', async (service, entry, env, misspelt, meant) => {
    const stack = new Stack({})
    const p = spawnService(`${service}-misspelt`, entry, { ...stack.env, ...env })
    expect(await p.exited()).toBe(1)
    const out = p.output()
    const warning = `countersign ${service}: WARNING: ${misspelt} is not a countersign setting and is ignored (did you mean ${meant}?)`
    expect(out).toContain(warning)
    expect(out.indexOf(warning)).toBeLessThan(out.indexOf(' must be '))
  })
})

describe('a policy that lets tokens through in any amount is named at the gateway’s start (review)', () => {
  it('the defaults: every ERC-20 token needs no operator, whatever amount; a policy with every allowed token limited says nothing', async () => {
    const open = new Stack({})
    const gateway = spawnService('gateway-policy-open', entries.gateway, { ...open.env, SERVICE_PORT: String(await freePort()), SERVICE_APPROVER_PORT: String(await freePort()) })
    try {
      await gateway.waitForLine(/countersign gateway: WARNING: policy: tokenAllowlist is empty, so every ERC-20 token is transferred or swapped in any amount without an operator/, 20_000)
    } finally {
      await gateway.stop()
    }
    const token = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913'
    const closed = new Stack({ policy: { tokenAllowlist: [token], tokenLimits: { [token]: { requireApprovalAbove: '0' } } } })
    const quiet = spawnService('gateway-policy-closed', entries.gateway, { ...closed.env, SERVICE_LOG_LEVEL: 'info', SERVICE_PORT: String(await freePort()), SERVICE_APPROVER_PORT: String(await freePort()) })
    try {
      await quiet.waitForLine(/countersign gateway ready/, 20_000)
      expect(quiet.output()).not.toMatch(/WARNING: policy:/)
    } finally {
      await quiet.stop()
    }
  }, 60_000)
})
