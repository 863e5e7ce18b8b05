import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { ConfigError } from '@countersign/shared'
import { loadSignerConfig } from './config.js'

describe('signer config', () => {
  it('has no dev chain unless SERVICE_SIGNER_DEV_CHAIN_ID names one', () => {
    expect(loadSignerConfig({}).devChainId).toBeNull()
    expect(loadSignerConfig({ SERVICE_SIGNER_DEV_CHAIN_ID: ' ' }).devChainId).toBeNull()
    expect(loadSignerConfig({ SERVICE_SIGNER_DEV_CHAIN_ID: '8453' }).devChainId).toBe(8453)
    expect(loadSignerConfig({ SERVICE_DATA_DIR: '/srv/countersign' }).keystoreDir).toBe(path.resolve('/srv/countersign/keystore'))
  })

  it.each(['5', 'base', '8453.0', '-1'])('refuses SERVICE_SIGNER_DEV_CHAIN_ID=%s naming the variable', (value) => {
    expect(() => loadSignerConfig({ SERVICE_SIGNER_DEV_CHAIN_ID: value })).toThrow(ConfigError)
    expect(() => loadSignerConfig({ SERVICE_SIGNER_DEV_CHAIN_ID: value })).toThrow(/SERVICE_SIGNER_DEV_CHAIN_ID must be one of 1, 10, 42161, 8453/)
  })
})

describe('PKCS#11 settings', () => {
  const base = { SERVICE_PKCS11_MODULE: '/usr/lib/softhsm/libsofthsm2.so', SERVICE_PKCS11_TOKEN_LABEL: 'countersign', SERVICE_PKCS11_PIN_FILE: '/etc/countersign/pin' }

  it('are off without SERVICE_PKCS11_MODULE, and complete with it', () => {
    expect(loadSignerConfig({}).pkcs11).toBeNull()
    expect(loadSignerConfig(base).pkcs11).toEqual({ modulePath: base.SERVICE_PKCS11_MODULE, tokenLabel: 'countersign', pinFile: '/etc/countersign/pin', sessions: 4 })
    expect(loadSignerConfig({ ...base, SERVICE_PKCS11_SESSIONS: '8' }).pkcs11?.sessions).toBe(8)
  })

  it('refuse half a configuration and a bad session count', () => {
    expect(() => loadSignerConfig({ SERVICE_PKCS11_TOKEN_LABEL: 'x' })).toThrow(/need SERVICE_PKCS11_MODULE/)
    expect(() => loadSignerConfig({ ...base, SERVICE_PKCS11_PIN_FILE: '' })).toThrow(/SERVICE_PKCS11_PIN_FILE/)
    expect(() => loadSignerConfig({ ...base, SERVICE_PKCS11_TOKEN_LABEL: ' ' })).toThrow(/SERVICE_PKCS11_TOKEN_LABEL/)
    expect(() => loadSignerConfig({ ...base, SERVICE_PKCS11_MODULE: 'libsofthsm2.so' })).toThrow(/absolute path/)
    for (const bad of ['0', '65', '2.5', 'four']) expect(() => loadSignerConfig({ ...base, SERVICE_PKCS11_SESSIONS: bad })).toThrow(ConfigError)
  })
})
