import { describe, expect, it } from 'vitest'
import { ConfigError, loadGatewayConfig, parseSkillConcurrency, parseSkillPublishers } from './config.js'

describe('SERVICE_SKILL_PUBLISHERS', () => {
  it('is a comma-separated list of addresses, kept lower-cased', () => {
    expect([...parseSkillPublishers(undefined)]).toEqual([])
    expect([...parseSkillPublishers(' ')]).toEqual([])
    const set = parseSkillPublishers('0x90F8bf6A479f320ead074411a4B0e7944Ea8c9C1, 0x' + 'ab'.repeat(20) + ',')
    expect([...set]).toEqual(['0x90f8bf6a479f320ead074411a4b0e7944ea8c9c1', '0x' + 'ab'.repeat(20)])
  })

  it('refuses anything else at start, naming the entry', () => {
    expect(() => parseSkillPublishers('0x1234')).toThrow(ConfigError)
    expect(() => parseSkillPublishers('alice')).toThrow(/"alice" is not one/)
    // A mixed-case address with a wrong checksum is a typo, not an address.
    expect(() => parseSkillPublishers('0x90F8bf6A479f320ead074411a4B0e7944Ea8c9c1')).toThrow(/EIP-55 checksum/)
    expect(() => loadGatewayConfig({ SERVICE_SKILL_PUBLISHERS: 'nope' })).toThrow(/SERVICE_SKILL_PUBLISHERS/)
  })
})

describe('SERVICE_SKILL_CONCURRENCY', () => {
  it('defaults to 2 and takes 1..32', () => {
    expect(parseSkillConcurrency(undefined)).toBe(2)
    expect(loadGatewayConfig({}).skillConcurrency).toBe(2)
    expect(parseSkillConcurrency('1')).toBe(1)
    expect(parseSkillConcurrency('32')).toBe(32)
  })

  it('refuses anything else at start', () => {
    for (const bad of ['0', '33', '-1', '1.5', 'two', '1e1']) expect(() => parseSkillConcurrency(bad), bad).toThrow(/SERVICE_SKILL_CONCURRENCY must be a whole number from 1 to 32/)
  })
})

describe('SERVICE_MAX_CONNECTIONS', () => {
  it('defaults to 1024 and takes 16..65536', () => {
    expect(loadGatewayConfig({}).maxConnections).toBe(1024)
    expect(loadGatewayConfig({ SERVICE_MAX_CONNECTIONS: '16' }).maxConnections).toBe(16)
    expect(loadGatewayConfig({ SERVICE_MAX_CONNECTIONS: '65536' }).maxConnections).toBe(65536)
  })

  it('refuses anything else at start', () => {
    for (const bad of ['0', '15', '65537', '-1', '1.5', 'many']) {
      expect(() => loadGatewayConfig({ SERVICE_MAX_CONNECTIONS: bad }), bad).toThrow(/SERVICE_MAX_CONNECTIONS must be a whole number from 16 to 65536/)
    }
  })
})

describe('SERVICE_AGGREGATOR_URL', () => {
  it('refuses user:password in the URL at start (the key goes in AGGREGATOR_API_KEY), without showing them', () => {
    let err: unknown
    try {
      loadGatewayConfig({ SERVICE_AGGREGATOR_URL: 'https://alice:S3CRET@agg.example/swap/v6.0' })
    } catch (e) {
      err = e
    }
    expect(err).toBeInstanceOf(ConfigError)
    expect((err as Error).message).toMatch(/^SERVICE_AGGREGATOR_URL must be an http:\/\/ or https:\/\/ URL without user:password/)
    expect((err as Error).message).not.toContain('S3CRET')
    expect(loadGatewayConfig({ SERVICE_AGGREGATOR_URL: 'https://agg.example/swap/v6.0' }).aggregator.baseUrl).toBe('https://agg.example/swap/v6.0')
  })
})
