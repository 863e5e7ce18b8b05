import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { OperatorError, describeFailure } from '../operatorError.js'
import { localUrlOf, readApproverListen, readDataDir, readGatewayListen, readRpcUrls } from './common.js'
import { ConfigError } from './configError.js'
import { readVariable } from './read.js'
import { VARIABLES } from './variables.js'

describe('readVariable', () => {
  it('is undefined when unset or blank, so the caller default applies', () => {
    expect(readVariable({}, 'SERVICE_PORT')).toBeUndefined()
    expect(readVariable({ SERVICE_PORT: '  ' }, 'SERVICE_PORT')).toBeUndefined()
    expect(readVariable({ SERVICE_PORT: ' 8080 ' }, 'SERVICE_PORT')).toBe(8080)
  })

  it('refuses port 0 for the gateway and the approver: the kernel would pick a port the launcher and dev-chain.json never learn (found by review)', () => {
    for (const name of ['SERVICE_PORT', 'SERVICE_APPROVER_PORT'] as const) {
      for (const raw of ['0', '00000']) expect(() => readVariable({ [name]: raw }, name)).toThrow(`${name} must be a port number from 1 to 65535; got "${raw}"`)
      expect(readVariable({ [name]: '1' }, name)).toBe(1)
      expect(readVariable({ [name]: '65535' }, name)).toBe(65535)
    }
    expect(() => readGatewayListen({ SERVICE_PORT: '0' })).toThrow(ConfigError)
    expect(() => readApproverListen({ SERVICE_APPROVER_PORT: '0' })).toThrow(ConfigError)
  })

  it('refuses a bad value naming the variable it came from and the accepted form', () => {
    expect(() => readVariable({ SERVICE_APPROVER_PORT: 'abc' }, 'SERVICE_APPROVER_PORT')).toThrow(ConfigError)
    expect(() => readVariable({ SERVICE_APPROVER_PORT: 'abc' }, 'SERVICE_APPROVER_PORT')).toThrow('SERVICE_APPROVER_PORT must be a port number from 1 to 65535; got "abc"')
    expect(() => readVariable({ SERVICE_RPC_URL_10: 'ws://x' }, 'SERVICE_RPC_URL_{chainId}', 'SERVICE_RPC_URL_10')).toThrow('SERVICE_RPC_URL_10 must be an http:// or https:// URL; got "ws://x" (path and credentials not shown)')
    // A provider's key in the path or the user info never reaches the message (it goes to logs).
    const key = 'k3yk3yk3yk3yk3yk3y'
    for (const raw of [`wss://base-mainnet.example.com/v2/${key}`, `ftp://user:${key}@rpc.example.com/`, `https//base.example.com/v2/${key}`]) {
      let message = ''
      try {
        readVariable({ SERVICE_RPC_URL_10: raw }, 'SERVICE_RPC_URL_{chainId}', 'SERVICE_RPC_URL_10')
      } catch (err) {
        message = (err as Error).message
      }
      expect(message).toMatch(/^SERVICE_RPC_URL_10 must be an http/)
      expect(message).not.toContain(key)
    }
  })

  it('never echoes a secret it refuses, only its length', () => {
    let message = ''
    try {
      readVariable({ SERVICE_OPERATOR_TOKEN: 'hunter2-hunter2' }, 'SERVICE_OPERATOR_TOKEN')
    } catch (err) {
      message = (err as Error).message
    }
    expect(message).toBe(`SERVICE_OPERATOR_TOKEN must be ${VARIABLES.SERVICE_OPERATOR_TOKEN.form}; got 15 characters`)
    expect(message).not.toContain('hunter2')
  })

  it.each([
    ['SERVICE_PORT', ['65536', '-1', '80.5', '0x50', '1e3']],
    ['SERVICE_SKILL_CONCURRENCY', ['0', '33', 'two']],
    ['SERVICE_APPROVAL_TTL_MS', ['999', '300001', '5s']],
    ['SERVICE_CLI_APPROVAL_TIMEOUT_MS', ['abc', '0', '1.5']],
    ['SERVICE_SOCKET_MODE', ['0666', '600']],
    ['SERVICE_LOG_LEVEL', ['verbose']],
    ['SERVICE_OPERATOR_AUTH', ['false', 'no']],
    ['SERVICE_SERVER_TIMING', ['1', 'true', 'ON']],
    ['SERVICE_ALLOW_AUTO_APPROVAL', ['yes', 'true']],
    ['SERVICE_HOST', ['http://0.0.0.0', 'a b', '-x']],
    ['SERVICE_SIGNER_SOCKET', ['run/signer.sock']],
    ['SERVICE_OPERATOR_TOKEN', ['x'.repeat(31), `${'x'.repeat(20)} ${'x'.repeat(20)}`, 'x'.repeat(1025)]],
  ] as const)('%s refuses each malformed value', (name, values) => {
    for (const value of values) expect(() => readVariable({ [name]: value }, name), value).toThrow(`${name} must be ${VARIABLES[name].form}`)
  })

  it('every refusal is an OperatorError: printed as its message, without a stack', () => {
    let caught: unknown
    try {
      readVariable({ SERVICE_SOCKET_MODE: '0777' }, 'SERVICE_SOCKET_MODE')
    } catch (err) {
      caught = err
    }
    expect(caught).toBeInstanceOf(OperatorError)
    expect(describeFailure(caught)).toBe('SERVICE_SOCKET_MODE must be 0600 or 0660; got "0777"')
    const bug = new TypeError('x is undefined')
    expect(describeFailure(bug)).toContain('at ') // anything else keeps its stack
  })
})

describe('the shared settings', () => {
  it('the data dir is parsed once, absolute', () => {
    expect(readDataDir({})).toBe(path.resolve('data'))
    expect(readDataDir({ SERVICE_DATA_DIR: 'var/cs' })).toBe(path.resolve('var/cs'))
  })

  it('SERVICE_HOST moves only the gateway: the approver stays on 127.0.0.1 unless SERVICE_APPROVER_HOST says otherwise', () => {
    const env = { SERVICE_HOST: '0.0.0.0', SERVICE_PORT: '8080' }
    expect(readGatewayListen(env)).toEqual({ host: '0.0.0.0', port: 8080 })
    expect(readApproverListen(env)).toEqual({ host: '127.0.0.1', port: 3101 })
    expect(readApproverListen({ ...env, SERVICE_APPROVER_HOST: '10.0.0.5', SERVICE_APPROVER_PORT: '4000' })).toEqual({ host: '10.0.0.5', port: 4000 })
    expect(() => readApproverListen({ SERVICE_APPROVER_PORT: 'abc' })).toThrow(/^SERVICE_APPROVER_PORT must be a port number/)
  })

  it('a wildcard listener is reached on loopback; an IPv6 one in brackets', () => {
    expect(localUrlOf({ host: '0.0.0.0', port: 1 })).toBe('http://127.0.0.1:1')
    expect(localUrlOf({ host: '::', port: 1 })).toBe('http://127.0.0.1:1')
    expect(localUrlOf({ host: '::1', port: 2 })).toBe('http://[::1]:2')
    expect(localUrlOf({ host: '10.0.0.5', port: 3 })).toBe('http://10.0.0.5:3')
  })

  it('RPC URLs: one per configured chain, BASE_RPC_URL standing in for 8453 only when SERVICE_RPC_URL_8453 is unset', () => {
    expect(readRpcUrls({})).toEqual([])
    expect(readRpcUrls({ SERVICE_RPC_URL_1: 'http://a', BASE_RPC_URL: 'https://b' })).toEqual([
      { chainId: 1, url: 'http://a', variable: 'SERVICE_RPC_URL_1' },
      { chainId: 8453, url: 'https://b', variable: 'BASE_RPC_URL' },
    ])
    expect(readRpcUrls({ SERVICE_RPC_URL_8453: 'http://c', BASE_RPC_URL: 'https://b' })).toEqual([{ chainId: 8453, url: 'http://c', variable: 'SERVICE_RPC_URL_8453' }])
    expect(() => readRpcUrls({ BASE_RPC_URL: 'base.example' })).toThrow(/^BASE_RPC_URL must be an http/)
  })

  // Found by review: the services ignored SERVICE_RPC_URL_137 while npm start took it for a configured chain.
  it('refuses an RPC URL for a chain countersign does not support, naming it; a blank one is unset', () => {
    expect(() => readRpcUrls({ SERVICE_RPC_URL_137: 'http://polygon.example' })).toThrow(
      'SERVICE_RPC_URL_137 names no chain countersign supports (it reads SERVICE_RPC_URL_1, SERVICE_RPC_URL_10, SERVICE_RPC_URL_42161, SERVICE_RPC_URL_8453); rename or unset it',
    )
    // Names no reader takes, though they look like a supported chain (second review).
    for (const name of ['SERVICE_RPC_URL_0', 'SERVICE_RPC_URL_08453', 'SERVICE_RPC_URL_BASE', 'SERVICE_RPC_URL_8453 ']) {
      expect(() => readRpcUrls({ SERVICE_RPC_URL_8453: 'http://c', [name]: 'http://z' }), name).toThrow(ConfigError)
    }
    expect(readRpcUrls({ SERVICE_RPC_URL_137: '  ', SERVICE_RPC_URL_8453: ' ' })).toEqual([])
  })
})
