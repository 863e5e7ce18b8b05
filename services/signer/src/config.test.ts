import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { loadSignerConfig, SignerConfigError } from './config.js'

describe('signer config', () => {
  it('has no dev chain unless SERVICE_SIGNER_DEV_CHAIN_ID names one', () => {
    expect(loadSignerConfig({}).devChainId).toBeNull()
    expect(loadSignerConfig({ SERVICE_SIGNER_DEV_CHAIN_ID: ' ' }).devChainId).toBeNull()
    expect(loadSignerConfig({ SERVICE_SIGNER_DEV_CHAIN_ID: '8453' }).devChainId).toBe(8453)
    expect(loadSignerConfig({ SERVICE_DATA_DIR: '/tmp/x' }).keystoreDir).toBe(path.resolve('/tmp/x/keystore'))
  })

  it.each(['5', 'base', '8453.0', '-1'])('refuses SERVICE_SIGNER_DEV_CHAIN_ID=%s naming the variable', (value) => {
    expect(() => loadSignerConfig({ SERVICE_SIGNER_DEV_CHAIN_ID: value })).toThrow(SignerConfigError)
    expect(() => loadSignerConfig({ SERVICE_SIGNER_DEV_CHAIN_ID: value })).toThrow(/SERVICE_SIGNER_DEV_CHAIN_ID must be one of 1, 10, 42161, 8453/)
  })
})
