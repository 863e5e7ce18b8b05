import { describe, expect, it } from 'vitest'
import { loadApproverConfig, parseApprovalChannels } from './config.js'

describe('approval channels', () => {
  it('SERVICE_APPROVAL_MODE stays a shorthand; the dashboard is on whenever a human decides', () => {
    expect(parseApprovalChannels({})).toEqual(['web'])
    expect(parseApprovalChannels({ SERVICE_APPROVAL_MODE: 'web' })).toEqual(['web'])
    expect(parseApprovalChannels({ SERVICE_APPROVAL_MODE: 'cli' })).toEqual(['web', 'cli'])
    expect(parseApprovalChannels({ SERVICE_APPROVAL_MODE: 'auto' })).toEqual(['auto'])
    expect(() => parseApprovalChannels({ SERVICE_APPROVAL_MODE: 'phone' })).toThrow(/web, cli or auto/)
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
