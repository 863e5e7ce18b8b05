import { execFileSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { defaultPolicyConfig } from './defaults.js'
import { loadPolicyFile, parsePolicyConfig, PolicyConfigError } from './loadPolicy.js'

describe('policy file', () => {
  it('defaults are those of DESIGN.md, plus a fee ceiling of 0.05 ETH (maxGasCostWei, the project\'s addition)', () => {
    expect(defaultPolicyConfig()).toEqual({
      allowedChains: [1, 10, 42161, 8453],
      tokenAllowlist: [],
      contractAllowlist: [],
      recipientAllowlist: [],
      maxValueWei: null,
      maxGasCostWei: '50000000000000000',
      maxApprovalAmount: null,
      requireApprovalAbove: { valueWei: '0' },
      maxRiskScore: 50,
      maxSwapSlippageBps: 300,
      maxTxPerHour: 10,
      tokenLimits: {},
      unlimitedApprovals: 'require_approval',
      requireQuorumAbove: null,
    })
  })

  it('overrides only the fields it names and lowercases token limit keys', () => {
    const c = parsePolicyConfig({ maxTxPerHour: 3, tokenLimits: { '0xABCDEF0000000000000000000000000000000001': { maxAmount: '7' } } })
    expect(c.maxTxPerHour).toBe(3)
    expect(c.maxRiskScore).toBe(50)
    expect(c.tokenLimits).toEqual({ '0xabcdef0000000000000000000000000000000001': { maxAmount: '7' } })
  })

  it.each([
    [{ maxTxPerHour: 3, extra: true }, "must NOT have additional property 'extra'"],
    [{ maxValueWei: 1000 }, 'policy/maxValueWei'],
    [{ allowedChains: [5] }, 'policy/allowedChains/0'],
    [{ tokenLimits: { nope: { maxAmount: '1' } } }, "additional property 'nope'"],
    [{ tokenLimits: { '0x0000000000000000000000000000000000000001': { max: '1' } } }, "additional property 'max'"],
    [{ requireApprovalAbove: {} }, 'valueWei'],
    [{ unlimitedApprovals: 'sometimes' }, 'policy/unlimitedApprovals must be equal to one of the allowed values'],
    [[], 'policy must be object'],
  ])('refuses %j naming the problem', (json, fragment) => {
    expect(() => parsePolicyConfig(json)).toThrow(PolicyConfigError)
    expect(() => parsePolicyConfig(json)).toThrow(fragment)
  })

  it('accepts "version": "1" (written by other clients) and keeps it out of the policy', () => {
    const c = parsePolicyConfig({ version: '1', maxTxPerHour: 4 })
    expect(c).toEqual({ ...defaultPolicyConfig(), maxTxPerHour: 4 })
    expect('version' in c).toBe(false)
  })

  it.each([['2'], [1], ['1.0'], [null], ['']])('refuses "version": %j naming it', (version) => {
    expect(() => parsePolicyConfig({ version, maxTxPerHour: 4 }, 'policy file p.json')).toThrow(
      `policy file p.json: policy/version ${JSON.stringify(version)} is not supported; this countersign reads version "1" (or no version)`,
    )
  })

  it('refuses two token limit keys for one token, and keeps no reference to the parsed JSON', () => {
    const a = '0xABCDEF0000000000000000000000000000000001'
    expect(() => parsePolicyConfig({ tokenLimits: { [a]: { maxAmount: '1' }, [a.toLowerCase()]: { maxAmount: '2' } } })).toThrow(
      /policy\/tokenLimits has token 0xabcdef0000000000000000000000000000000001 more than once/,
    )
    const json = { tokenAllowlist: [a] }
    const c = parsePolicyConfig(json)
    json.tokenAllowlist.push(a)
    expect(c.tokenAllowlist).toEqual([a])
  })

  it('refuses a mixed-case address whose EIP-55 checksum fails, and the native pseudo-token as a token rule, naming where', () => {
    expect(() => parsePolicyConfig({ recipientAllowlist: ['0x000000000000000000000000000000000000B0b0'] }, 'p.json')).toThrow(
      'p.json: policy/recipientAllowlist/0 0x000000000000000000000000000000000000B0b0 is mixed case but fails its EIP-55 checksum (a typo?)',
    )
    expect(() => parsePolicyConfig({ tokenAllowlist: ['0x833589FCD6eDb6E08f4c7C32D4f71b54bdA02913'] })).toThrow(/policy\/tokenAllowlist\/0 .* fails its EIP-55 checksum/)
    const native = '0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE'
    expect(() => parsePolicyConfig({ tokenLimits: { [native]: { maxAmount: '100000000000000000' } } })).toThrow(
      /policy\/tokenLimits\/0xEeee.* names the native pseudo-token .* limit native value with maxValueWei/,
    )
    expect(() => parsePolicyConfig({ requireQuorumAbove: { tokens: { [native]: '1' }, approvals: 2 } })).toThrow(/requireQuorumAbove\/tokens\/.* native pseudo-token/)
    // Lower case, upper case and correct checksums load as before.
    expect(parsePolicyConfig({ recipientAllowlist: ['0x000000000000000000000000000000000000b0b0', '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', '0x833589FCD6EDB6E08F4C7C32D4F71B54BDA02913'] }).recipientAllowlist).toHaveLength(3)
  })

  it('names the file when it is missing or not JSON', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'cs-policy-'))
    const bad = path.join(dir, 'policy.json')
    writeFileSync(bad, '{ not json')
    expect(() => loadPolicyFile(bad)).toThrow(`policy file ${bad} is not valid JSON`)
    expect(() => loadPolicyFile(path.join(dir, 'missing.json'))).toThrow(/cannot read policy file/)
    writeFileSync(bad, JSON.stringify({ maxRiskScore: 20 }))
    expect(loadPolicyFile(bad).maxRiskScore).toBe(20)
  })

  it('refuses a member given twice (JSON would keep the larger cap silently), a FIFO at once, and text that is not UTF-8', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'cs-policy-odd-'))
    const twice = path.join(dir, 'twice.json')
    writeFileSync(twice, '{"maxValueWei":"1000","maxValueWei":"1000000000000000000000"}')
    expect(() => loadPolicyFile(twice)).toThrow(/policy\/maxValueWei is given twice/)
    const fifo = path.join(dir, 'fifo.json')
    execFileSync('mkfifo', [fifo])
    expect(() => loadPolicyFile(fifo)).toThrow(/is not a regular file/)
    expect(() => loadPolicyFile('/dev/zero')).toThrow(/is not a regular file/)
    const latin1 = path.join(dir, 'latin1.json')
    writeFileSync(latin1, Buffer.from('{"maxRiskScore":20,"x":"\xe4"}', 'latin1'))
    expect(() => loadPolicyFile(latin1)).toThrow(/is not UTF-8 text/)
  })
})
