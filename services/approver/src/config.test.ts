import { describe, expect, it } from 'vitest'
import { loadApproverConfig, parseApprovalChannels } from './config.js'

describe('approval channels', () => {
  it('SERVICE_APPROVAL_MODE stays a shorthand; the dashboard is on whenever a human decides', () => {
    expect(parseApprovalChannels({})).toEqual(['web'])
    expect(parseApprovalChannels({ SERVICE_APPROVAL_MODE: 'web' })).toEqual(['web'])
    expect(parseApprovalChannels({ SERVICE_APPROVAL_MODE: 'cli' })).toEqual(['web', 'cli'])
    expect(parseApprovalChannels({ SERVICE_APPROVAL_MODE: 'auto' })).toEqual(['auto'])
    expect(() => parseApprovalChannels({ SERVICE_APPROVAL_MODE: 'phone' })).toThrow('SERVICE_APPROVAL_MODE must be one of web, cli, auto; got "phone"')
  })

  it('SERVICE_APPROVAL_CHANNELS lists several at once, in a fixed order, each once', () => {
    expect(parseApprovalChannels({ SERVICE_APPROVAL_CHANNELS: 'webhook, cli,web,cli' })).toEqual(['web', 'cli', 'webhook'])
    expect(parseApprovalChannels({ SERVICE_APPROVAL_CHANNELS: 'cli' })).toEqual(['web', 'cli'])
    expect(() => parseApprovalChannels({ SERVICE_APPROVAL_CHANNELS: 'web,sms' })).toThrow(/got "sms"/)
    expect(() => parseApprovalChannels({ SERVICE_APPROVAL_CHANNELS: 'web,auto' })).toThrow(/cannot be combined/)
    // The default SERVICE_APPROVAL_MODE=web of an env file does not get in the way; a mode the list contradicts does.
    expect(parseApprovalChannels({ SERVICE_APPROVAL_CHANNELS: 'web,webhook', SERVICE_APPROVAL_MODE: 'web' })).toEqual(['web', 'webhook'])
    expect(parseApprovalChannels({ SERVICE_APPROVAL_CHANNELS: 'cli,webhook', SERVICE_APPROVAL_MODE: 'cli' })).toEqual(['web', 'cli', 'webhook'])
    expect(() => parseApprovalChannels({ SERVICE_APPROVAL_CHANNELS: 'web', SERVICE_APPROVAL_MODE: 'cli' })).toThrow(/does not include cli/)
    expect(() => parseApprovalChannels({ SERVICE_APPROVAL_CHANNELS: 'web', SERVICE_APPROVAL_MODE: 'auto' })).toThrow(/does not include auto/)
  })

  it('the config carries the channels and the mode derived from them', () => {
    expect(loadApproverConfig({ SERVICE_APPROVAL_CHANNELS: 'web,cli,webhook' })).toMatchObject({ mode: 'cli', channels: ['web', 'cli', 'webhook'] })
    expect(loadApproverConfig({ SERVICE_APPROVAL_MODE: 'auto' })).toMatchObject({ mode: 'auto', channels: ['auto'] })
  })
})

describe('named operators', () => {
  it('SERVICE_OPERATORS_FILE is resolved, and refused beside the single SERVICE_OPERATOR_TOKEN', () => {
    expect(loadApproverConfig({ SERVICE_OPERATORS_FILE: '/etc/countersign/operators.json' }).operatorsFile).toBe('/etc/countersign/operators.json')
    expect(loadApproverConfig({}).operatorsFile).toBeNull()
    expect(() => loadApproverConfig({ SERVICE_OPERATORS_FILE: '/x.json', SERVICE_OPERATOR_TOKEN: 'y'.repeat(40) })).toThrow(/unset SERVICE_OPERATOR_TOKEN/)
  })
})

describe('values refused at start, each naming its own variable', () => {
  it('SERVICE_APPROVER_PORT=abc is reported as SERVICE_APPROVER_PORT (not SERVICE_PORT)', () => {
    expect(() => loadApproverConfig({ SERVICE_APPROVER_PORT: 'abc' })).toThrow('SERVICE_APPROVER_PORT must be a port number from 1 to 65535; got "abc"')
    expect(() => loadApproverConfig({ SERVICE_PORT: 'abc' })).toThrow(/^SERVICE_PORT must be/)
  })

  it('SERVICE_CLI_APPROVAL_TIMEOUT_MS=abc is refused instead of becoming NaN', () => {
    expect(() => loadApproverConfig({ SERVICE_CLI_APPROVAL_TIMEOUT_MS: 'abc' })).toThrow('SERVICE_CLI_APPROVAL_TIMEOUT_MS must be a whole number from 1000 to 3600000 (milliseconds); got "abc"')
    expect(loadApproverConfig({}).cliTimeoutMs).toBe(120_000)
    expect(loadApproverConfig({ SERVICE_CLI_APPROVAL_TIMEOUT_MS: '5000' }).cliTimeoutMs).toBe(5000)
  })

  it('an operator token shorter than 32 characters is refused from SERVICE_OPERATOR_TOKEN, without printing it', () => {
    expect(() => loadApproverConfig({ SERVICE_OPERATOR_TOKEN: 'short-secret' })).toThrow(/^SERVICE_OPERATOR_TOKEN must be 32 to 1024 printable characters.*; got 12 characters$/)
    expect(() => loadApproverConfig({ SERVICE_OPERATOR_TOKEN: 'short-secret' })).not.toThrow(/short-secret/)
    expect(loadApproverConfig({ SERVICE_OPERATOR_TOKEN: 'y'.repeat(32) }).operatorToken).toBe('y'.repeat(32))
  })

  it('SERVICE_OPERATOR_AUTH and SERVICE_ALLOW_AUTO_APPROVAL take only their documented values', () => {
    expect(loadApproverConfig({ SERVICE_OPERATOR_AUTH: 'off' }).operatorAuth).toBe(false)
    expect(loadApproverConfig({}).operatorAuth).toBe(true)
    expect(() => loadApproverConfig({ SERVICE_OPERATOR_AUTH: 'false' })).toThrow('SERVICE_OPERATOR_AUTH must be on or off; got "false"')
    expect(() => loadApproverConfig({ SERVICE_ALLOW_AUTO_APPROVAL: 'yes' })).toThrow('SERVICE_ALLOW_AUTO_APPROVAL must be 0 or 1; got "yes"')
  })
})

describe('where the approver listens', () => {
  it('127.0.0.1 even when SERVICE_HOST exposes the gateway; SERVICE_APPROVER_HOST moves it', () => {
    expect(loadApproverConfig({ SERVICE_HOST: '0.0.0.0' })).toMatchObject({ host: '127.0.0.1', port: 3101 })
    expect(loadApproverConfig({ SERVICE_HOST: '0.0.0.0', SERVICE_APPROVER_HOST: '0.0.0.0', SERVICE_APPROVER_PORT: '4101' })).toMatchObject({ host: '0.0.0.0', port: 4101 })
  })
})

describe('SERVICE_MAX_CONNECTIONS', () => {
  it("is the gateway's limit on the approver's listeners too: 1024 by default, 16..65536, anything else refused at start", () => {
    expect(loadApproverConfig({}).maxConnections).toBe(1024)
    expect(loadApproverConfig({ SERVICE_MAX_CONNECTIONS: '4096' }).maxConnections).toBe(4096)
    expect(() => loadApproverConfig({ SERVICE_MAX_CONNECTIONS: '15' })).toThrow(/SERVICE_MAX_CONNECTIONS must be a whole number from 16 to 65536/)
  })
})
