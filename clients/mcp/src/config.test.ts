import { describe, expect, it } from 'vitest'
import { ConfigError, configFromEnv } from './config.js'

const WALLET = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266'

describe('configFromEnv', () => {
  it('defaults: local gateway, chain 8453, no wallet, canonical routers', () => {
    expect(configFromEnv({})).toEqual({ url: 'http://127.0.0.1:3100', wallet: undefined, chainId: 8453, routers: {}, maxGasWei: undefined, sendTimeoutMs: undefined })
  })

  it('reads every variable', () => {
    const c = configFromEnv({
      COUNTERSIGN_URL: 'http://127.0.0.1:4100/',
      COUNTERSIGN_WALLET: WALLET,
      COUNTERSIGN_CHAIN_ID: '10',
      COUNTERSIGN_V3_ROUTER_10: '0x1111111111111111111111111111111111111111',
      COUNTERSIGN_MAX_GAS_WEI: '5000',
      COUNTERSIGN_SEND_TIMEOUT_MS: '90000',
    })
    expect(c).toEqual({ url: 'http://127.0.0.1:4100', wallet: WALLET, chainId: 10, routers: { 10: '0x1111111111111111111111111111111111111111' }, maxGasWei: '5000', sendTimeoutMs: 90_000 })
  })

  it.each([
    [{ COUNTERSIGN_URL: 'ftp://x' }, /COUNTERSIGN_URL must be an http\(s\) URL/],
    [{ COUNTERSIGN_URL: 'not a url' }, /COUNTERSIGN_URL/],
    [{ COUNTERSIGN_WALLET: '0x12' }, /COUNTERSIGN_WALLET must be an address/],
    [{ COUNTERSIGN_CHAIN_ID: '5' }, /COUNTERSIGN_CHAIN_ID must be one of 1, 10, 42161, 8453; got "5"/],
    [{ COUNTERSIGN_V3_ROUTER_8453: 'router' }, /COUNTERSIGN_V3_ROUTER_8453 must be an address/],
    [{ COUNTERSIGN_MAX_GAS_WEI: '0.01' }, /COUNTERSIGN_MAX_GAS_WEI must be a whole number of wei/],
    [{ COUNTERSIGN_SEND_TIMEOUT_MS: '30s' }, /COUNTERSIGN_SEND_TIMEOUT_MS must be a whole number of milliseconds/],
  ])('refuses %j naming the variable', (env, message) => {
    expect(() => configFromEnv(env)).toThrow(ConfigError)
    expect(() => configFromEnv(env)).toThrow(message)
  })

  it.each(['http://alice:S3CRET@127.0.0.1:3100', 'http://alice@127.0.0.1:3100', 'ftp://alice:S3CRET@x', 'alice:S3CRET@[bad'])(
    'refuses COUNTERSIGN_URL %s with credentials, never repeating them (found by review: the start line and every tool error printed them)',
    (url) => {
      let err: unknown
      try {
        configFromEnv({ COUNTERSIGN_URL: url })
      } catch (e) {
        err = e
      }
      expect(err).toBeInstanceOf(ConfigError)
      expect((err as Error).message).toMatch(/^COUNTERSIGN_URL (must not contain a user name or password|must be an http\(s\) URL)/)
      expect((err as Error).message).not.toContain('S3CRET')
      expect((err as Error).message).not.toContain('alice')
    },
  )
})
