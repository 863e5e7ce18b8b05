// npm start's development stack runs a local chain with Base's chain id
// (8453): only the throwaway dev key may sign there. A PKCS#11 token
// configured beside it would have its real keys sign transactions valid on
// Base (found by review), so the launcher refuses to start dev mode with one.
import { existsSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { devModeRefusal, isDevMode } from '../scripts/dev-stack.mjs'
import { launcherRefusal } from './support/launcher.js'
import { freePort, tempDataDir } from './support/processes.js'

// Found by review: a whitespace-only SERVICE_RPC_URL_8453 counted as a configured chain here while the
// services ignored it, and npm start ran the stack with no chain at all.
describe('isDevMode', () => {
  it('is dev mode when no RPC URL is set, blank ones counting as unset', () => {
    expect(isDevMode({})).toBe(true)
    expect(isDevMode({ SERVICE_RPC_URL_8453: ' ', BASE_RPC_URL: '' })).toBe(true)
    expect(isDevMode({ SERVICE_RPC_URL_8453: 'http://127.0.0.1:8545' })).toBe(false)
    expect(isDevMode({ BASE_RPC_URL: 'https://base.example' })).toBe(false)
    // Not dev mode: the services then refuse the unsupported chain by name (readRpcUrls).
    expect(isDevMode({ SERVICE_RPC_URL_137: 'http://polygon.example' })).toBe(false)
    expect(isDevMode({ SERVICE_RPC_URL_08453: 'http://127.0.0.1:8545' })).toBe(false)
  })
})

describe('devModeRefusal (the dev stack and a PKCS#11 token)', () => {
  it('refuses any non-blank SERVICE_PKCS11_* variable, naming each and what to do', () => {
    const message = devModeRefusal({ SERVICE_PKCS11_TOKEN_LABEL: 'cs', SERVICE_PKCS11_MODULE: '/usr/lib/softhsm/libsofthsm2.so', SERVICE_PORT: '3100' })
    expect(message).toContain('SERVICE_PKCS11_MODULE, SERVICE_PKCS11_TOKEN_LABEL are set, but no SERVICE_RPC_URL_* is')
    expect(message).toContain("Base's chain id 8453")
    expect(message).toContain('Set SERVICE_RPC_URL_<chain id> to use the token, or unset them (in the environment or .env)')
    expect(devModeRefusal({ SERVICE_PKCS11_PIN_FILE: '/etc/countersign/pin' })).toMatch(/^SERVICE_PKCS11_PIN_FILE is set, .* or unset it /)
    expect(devModeRefusal({ SERVICE_PKCS11_SESSIONS: '4' })).toMatch(/^SERVICE_PKCS11_SESSIONS is set/)
  })

  it('lets the dev stack start without them (a blank value is unset, as everywhere in the configuration)', () => {
    expect(devModeRefusal({})).toBeNull()
    expect(devModeRefusal({ SERVICE_PKCS11_MODULE: '', SERVICE_PKCS11_TOKEN_LABEL: '  ', SERVICE_KEYSTORE_DIR: '/x' })).toBeNull()
  })

  it('npm start with a token and no RPC URL stops before the dev chain, the dev key or any service starts', async () => {
    const dir = tempDataDir()
    const { code, out } = await launcherRefusal({
      SERVICE_DATA_DIR: dir,
      SERVICE_PORT: String(await freePort()),
      SERVICE_APPROVER_PORT: String(await freePort()),
      SERVICE_DEV_CHAIN_PORT: String(await freePort()),
      SERVICE_PKCS11_MODULE: '/usr/lib/softhsm/libsofthsm2.so',
      SERVICE_PKCS11_TOKEN_LABEL: 'cs',
    })
    expect(code).toBe(1)
    expect(out).toContain('countersign: SERVICE_PKCS11_MODULE, SERVICE_PKCS11_TOKEN_LABEL are set, but no SERVICE_RPC_URL_* is')
    expect(out).not.toContain('starting the development stack')
    expect(out).not.toContain('dev chain: anvil on')
    expect(out).not.toMatch(/\n\s+at /) // no stack trace
    expect(existsSync(path.join(dir, 'dev-keystore'))).toBe(false)
    expect(existsSync(path.join(dir, 'dev-chain.json'))).toBe(false)
  })
})
