import { describe, expect, it } from 'vitest'
import { describeUnknownVariable, knownServiceVariables, unknownServiceVariables, warnUnknownVariables } from './unknownVariables.js'
import { VARIABLES } from './variables.js'

describe('unknownServiceVariables', () => {
  it('knows every name of the table, the per-chain ones for each supported chain, and the launcher\'s port', () => {
    const known = knownServiceVariables()
    for (const name of Object.keys(VARIABLES).filter((n) => !n.includes('{'))) expect(known.has(name)).toBe(true)
    for (const name of ['SERVICE_RPC_URL_1', 'SERVICE_RPC_URL_10', 'SERVICE_RPC_URL_42161', 'SERVICE_RPC_URL_8453', 'SERVICE_V3_ROUTER_8453', 'SERVICE_DEV_CHAIN_PORT']) {
      expect(known.has(name), name).toBe(true)
    }
    expect(known.has('SERVICE_RPC_URL_{chainId}')).toBe(false)
    expect(known.has('SERVICE_V3_ROUTER_137')).toBe(false)
  })

  it('names only SERVICE_* names it does not read, set to something, in order', () => {
    const env = {
      SERVICE_PORT: '3100',
      SERVICE_APROVAL_MODE: 'web',
      SERVICE_V3_ROUTER_137: '0x0000000000000000000000000000000000000001',
      SERVICE_BLANK_ONE: '  ',
      PATH: '/usr/bin',
      MY_SERVICE_PORT: '1',
      SERVICE_NAME: 'billing',
    }
    expect(unknownServiceVariables(env)).toEqual([
      { name: 'SERVICE_APROVAL_MODE', suggestion: 'SERVICE_APPROVAL_MODE' },
      { name: 'SERVICE_NAME' },
      { name: 'SERVICE_V3_ROUTER_137' },
    ])
  })

  it('suggests the one nearest name within two edits, and nothing when two are as near', () => {
    const suggest = (name: string) => unknownServiceVariables({ [name]: 'x' })[0]?.suggestion
    expect(suggest('SERVICE_PROT')).toBe('SERVICE_PORT')
    expect(suggest('SERVICE_PASSPHRASE_FIEL')).toBe('SERVICE_PASSPHRASE_FILE')
    expect(suggest('SERVICE_OPERATOR_TOKENS')).toBe('SERVICE_OPERATOR_TOKEN')
    expect(suggest('SERVICE_RPC_URL_8543')).toBe('SERVICE_RPC_URL_8453')
    // SERVICE_HOST and SERVICE_PORT are both two edits from it.
    expect(suggest('SERVICE_POST')).toBeUndefined()
    expect(suggest('SERVICE_SOMETHING_ELSE_ENTIRELY')).toBeUndefined()
  })

  it('writes one warning line per name', () => {
    const lines: string[] = []
    warnUnknownVariables({ SERVICE_PROT: '1', SERVICE_PORT: '2' }, 'gateway', (line) => lines.push(line))
    expect(lines).toEqual(['countersign gateway: WARNING: SERVICE_PROT is not a countersign setting and is ignored (did you mean SERVICE_PORT?)\n'])
    expect(describeUnknownVariable({ name: 'SERVICE_NAME' })).toBe('SERVICE_NAME is not a countersign setting and is ignored')
  })
})
