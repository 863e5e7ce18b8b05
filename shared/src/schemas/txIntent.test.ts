import { describe, expect, it } from 'vitest'
import { actions, makeIntent } from '../testing/intents.js'
import { createAjv, describeValidationErrors } from '../validation.js'
import { signAndSendBodySchema, txIntentSchema } from './txIntent.js'

const validate = createAjv().compile(txIntentSchema)
const check = (v: unknown) => {
  const ok = validate(v)
  return { ok, message: ok ? '' : describeValidationErrors(validate.errors) }
}
const base = () => makeIntent() as unknown as Record<string, any>

describe('txIntentSchema', () => {
  it.each(Object.keys(actions))('accepts a %s intent', (name) => {
    expect(check(makeIntent({ action: actions[name as keyof typeof actions]() }))).toEqual({ ok: true, message: '' })
  })

  it('accepts the optional fields DESIGN.md defines', () => {
    const i = { ...base(), chain: { type: 'evm', chainId: 1, rpcHint: 'https://x' }, wallet: { address: '0x' + 'a'.repeat(40), profile: 'ops' }, metadata: { source: 'agent', note: 'hi' }, preferences: { speed: 'fast', privateRelay: false } }
    expect(check(i).ok).toBe(true)
    expect(check({ ...base(), timestamp: 1795000000000 }).ok).toBe(true)
  })

  it.each<[string, (i: Record<string, any>) => unknown, string]>([
    ['unknown top-level field', (i) => ({ ...i, x: 1 }), "body must NOT have additional property 'x'"],
    ['unknown field in chain', (i) => ({ ...i, chain: { ...i.chain, x: 1 } }), 'body/chain'],
    ['unknown field in asset', (i) => ({ ...i, action: { ...i.action, asset: { ...i.action.asset, x: 1 } } }), 'body/action/asset'],
    ['unknown field in preferences', (i) => ({ ...i, preferences: { gasPrice: '1' } }), 'body/preferences'],
    ['number amount', (i) => ({ ...i, action: { ...i.action, amount: 5 } }), 'body/action/amount must be string'],
    ['negative amount', (i) => ({ ...i, action: { ...i.action, amount: '-5' } }), 'body/action/amount'],
    ['leading zero amount', (i) => ({ ...i, action: { ...i.action, amount: '05' } }), 'body/action/amount'],
    ['decimal amount', (i) => ({ ...i, action: { ...i.action, amount: '1.5' } }), 'body/action/amount'],
    ['79-digit amount', (i) => ({ ...i, action: { ...i.action, amount: '1'.repeat(79) } }), 'body/action/amount'],
    ['short address', (i) => ({ ...i, action: { ...i.action, to: '0x1234' } }), 'body/action/to'],
    ['chain 5', (i) => ({ ...i, chain: { type: 'evm', chainId: 5 } }), 'body/chain/chainId'],
    ['chain type solana', (i) => ({ ...i, chain: { type: 'solana', chainId: 1 } }), 'body/chain/type'],
    ['missing deadline', (i) => ({ ...i, constraints: { maxGasWei: '1', maxSlippageBps: 0 } }), "required property 'deadline'"],
    ['slippage above 100%', (i) => ({ ...i, constraints: { ...i.constraints, maxSlippageBps: 10001 } }), 'maxSlippageBps'],
    ['bad provider', (i) => ({ ...i, action: { ...actions.swapIn(), provider: 'uniswap' } }), 'body/action/provider'],
    ['missing action type', (i) => ({ ...i, action: { to: i.action.to, amount: '1' } }), "required property 'type'"],
    ['asset on a native transfer', (i) => ({ ...i, action: { ...actions.native(), asset: i.action.asset } }), "additional property 'asset'"],
    ['version 2', (i) => ({ ...i, version: '2' }), 'body/version'],
    ['float timestamp', (i) => ({ ...i, timestamp: 1.5 }), 'body/timestamp'],
    ['id not a uuid', (i) => ({ ...i, id: 'x' }), 'body/id must match format "uuid"'],
  ])('rejects %s', (_name, mutate, fragment) => {
    const r = check(mutate(base()))
    expect(r.ok).toBe(false)
    expect(r.message).toContain(fragment)
  })

  it('sign-and-send body: intent plus an optional UUID token, nothing else', () => {
    const v = createAjv().compile(signAndSendBodySchema)
    expect(v({ intent: makeIntent() })).toBe(true)
    expect(v({ intent: makeIntent(), approvalTokenId: '123e4567-e89b-12d3-a456-426614174000' })).toBe(true)
    expect(v({ intent: makeIntent(), approvalTokenId: 'abc' })).toBe(false)
    expect(v({ intent: makeIntent(), signature: '0x' })).toBe(false)
    expect(v(makeIntent())).toBe(false)
  })
})
