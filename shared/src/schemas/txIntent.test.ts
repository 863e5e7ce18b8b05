import { describe, expect, it } from 'vitest'
import { actions, makeIntent } from '../server/testing/intents.js'
import { ACTION_TYPES } from '../actions/index.js'
import { SUPPORTED_CHAIN_IDS } from '../types.js'
import { createAjv, describeValidationErrors } from '../validation.js'
import { chainIdSchema } from './formats.js'
import {
  actionSchema,
  balanceParamsSchema,
  balanceQuerySchema,
  signAndSendBodySchema,
  txHashParamsSchema,
  txIntentSchema,
  txReceiptQuerySchema,
} from './txIntent.js'

const validate = createAjv().compile(txIntentSchema)
const check = (v: unknown) => {
  const ok = validate(v)
  return { ok, message: ok ? '' : describeValidationErrors(validate.errors) }
}
type Json = Record<string, any>
const base = () => makeIntent() as unknown as Json
const withAction = (a: Json) => ({ ...base(), action: a })
const ADDR = '0x' + 'a'.repeat(40)

describe('txIntentSchema', () => {
  it.each(Object.keys(actions))('accepts a %s intent', (name) => {
    expect(check(makeIntent({ action: actions[name as keyof typeof actions]() }))).toEqual({ ok: true, message: '' })
  })

  it('accepts the optional fields DESIGN.md defines', () => {
    const i = { ...base(), chain: { type: 'evm', chainId: 1, rpcHint: 'https://x' }, wallet: { address: ADDR, profile: 'ops' }, metadata: { source: 'agent', note: 'hi' }, preferences: { speed: 'fast', privateRelay: false } }
    expect(check(i).ok).toBe(true)
    expect(check({ ...base(), timestamp: 1795000000000 }).ok).toBe(true)
  })

  it('accepts minimal assets, both providers, every supported chain and zero amounts', () => {
    const swap = { ...actions.swapIn(), assetIn: { kind: 'erc20', address: ADDR }, assetOut: { kind: 'erc20', address: ADDR, decimals: 0 } }
    expect(check(withAction(swap)).ok).toBe(true)
    expect(check(withAction({ ...swap, provider: 'aggregator' })).ok).toBe(true)
    expect(check(withAction({ ...actions.swapOut(), provider: 'v3_router' })).ok).toBe(true)
    for (const chainId of SUPPORTED_CHAIN_IDS) expect(check({ ...base(), chain: { type: 'evm', chainId } }).ok).toBe(true)
    expect(check(withAction(actions.native('0'))).ok).toBe(true)
    expect(check(withAction(actions.transfer('9'.repeat(78)))).ok).toBe(true)
    expect(check({ ...base(), metadata: {}, preferences: {} }).ok).toBe(true)
  })

  describe('rejects an unknown member at every object level', () => {
    const extra = (o: Json) => ({ ...o, sneaky: 1 })
    it.each<[string, (i: Json) => Json, string]>([
      ['intent', (i) => extra(i), 'body'],
      ['chain', (i) => ({ ...i, chain: extra(i.chain) }), 'body/chain'],
      ['wallet', (i) => ({ ...i, wallet: extra(i.wallet) }), 'body/wallet'],
      ['constraints', (i) => ({ ...i, constraints: extra(i.constraints) }), 'body/constraints'],
      ['metadata', (i) => ({ ...i, metadata: extra({ source: 'x' }) }), 'body/metadata'],
      ['preferences', (i) => ({ ...i, preferences: extra({ speed: 'slow' }) }), 'body/preferences'],
      ['transfer action', () => withAction(extra(actions.transfer())), 'body/action'],
      ['transfer asset', () => withAction({ ...actions.transfer(), asset: extra((actions.transfer() as Json).asset) }), 'body/action/asset'],
      ['transfer_native action', () => withAction(extra(actions.native())), 'body/action'],
      ['approve action', () => withAction(extra(actions.approve())), 'body/action'],
      ['approve asset', () => withAction({ ...actions.approve(), asset: extra((actions.approve() as Json).asset) }), 'body/action/asset'],
      ['swap_exact_in action', () => withAction(extra(actions.swapIn())), 'body/action'],
      ['swap_exact_in assetIn', () => withAction({ ...actions.swapIn(), assetIn: extra((actions.swapIn() as Json).assetIn) }), 'body/action/assetIn'],
      ['swap_exact_out action', () => withAction(extra(actions.swapOut())), 'body/action'],
      ['swap_exact_out assetOut', () => withAction({ ...actions.swapOut(), assetOut: extra((actions.swapOut() as Json).assetOut) }), 'body/action/assetOut'],
    ])('%s', (_level, mutate, path) => {
      const r = check(mutate(base()))
      expect(r.ok).toBe(false)
      expect(r.message).toBe(`${path} must NOT have additional property 'sneaky'`)
    })
  })

  it.each<[string, (i: Json) => unknown, string]>([
    // amounts
    ['number amount', (i) => ({ ...i, action: { ...i.action, amount: 5 } }), 'body/action/amount must be string'],
    ['number maxGasWei', (i) => ({ ...i, constraints: { ...i.constraints, maxGasWei: 1e15 } }), 'body/constraints/maxGasWei must be string'],
    ['number amountIn', () => withAction({ ...actions.swapIn(), amountIn: 1000000 }), 'body/action/amountIn must be string'],
    ['number maxAmountIn', () => withAction({ ...actions.swapOut(), maxAmountIn: 5 }), 'body/action/maxAmountIn must be string'],
    ['negative amount', (i) => ({ ...i, action: { ...i.action, amount: '-5' } }), 'body/action/amount must match pattern'],
    ['negative minAmountOut', () => withAction({ ...actions.swapIn(), minAmountOut: '-1' }), 'body/action/minAmountOut must match pattern'],
    ['leading zero amount', (i) => ({ ...i, action: { ...i.action, amount: '05' } }), 'body/action/amount must match pattern'],
    ['leading zero amountOut', () => withAction({ ...actions.swapOut(), amountOut: '00' }), 'body/action/amountOut must match pattern'],
    ['decimal amount', (i) => ({ ...i, action: { ...i.action, amount: '1.5' } }), 'body/action/amount'],
    ['exponent amount', (i) => ({ ...i, action: { ...i.action, amount: '1e18' } }), 'body/action/amount'],
    ['hex amount', (i) => ({ ...i, action: { ...i.action, amount: '0x10' } }), 'body/action/amount'],
    ['padded amount', (i) => ({ ...i, action: { ...i.action, amount: ' 5' } }), 'body/action/amount'],
    ['empty amount', (i) => ({ ...i, action: { ...i.action, amount: '' } }), 'body/action/amount'],
    ['79-digit amount', (i) => ({ ...i, action: { ...i.action, amount: '1'.repeat(79) } }), 'body/action/amount'],
    // addresses
    ['short address', (i) => ({ ...i, action: { ...i.action, to: '0x1234' } }), 'body/action/to'],
    ['wallet address without 0x', (i) => ({ ...i, wallet: { address: 'a'.repeat(40) } }), 'body/wallet/address must match pattern'],
    ['wallet address with a non-hex digit', (i) => ({ ...i, wallet: { address: '0x' + 'g'.repeat(40) } }), 'body/wallet/address'],
    ['41-digit spender', () => withAction({ ...actions.approve(), spender: '0x' + '1'.repeat(41) }), 'body/action/spender'],
    ['bad router', () => withAction({ ...actions.swapIn(), router: 'uniswap' }), 'body/action/router'],
    ['bad asset address', (i) => ({ ...i, action: { ...i.action, asset: { kind: 'erc20', address: '0x' } } }), 'body/action/asset/address'],
    // chain
    ['chain 5', (i) => ({ ...i, chain: { type: 'evm', chainId: 5 } }), 'body/chain/chainId must be equal to one of the allowed values'],
    ['chainId as a string', (i) => ({ ...i, chain: { type: 'evm', chainId: '8453' } }), 'body/chain/chainId must be integer'],
    ['chain type solana', (i) => ({ ...i, chain: { type: 'solana', chainId: 1 } }), 'body/chain/type must be equal to constant'],
    ['chain without chainId', (i) => ({ ...i, chain: { type: 'evm' } }), "body/chain must have required property 'chainId'"],
    ['rpcHint over 512 chars', (i) => ({ ...i, chain: { ...i.chain, rpcHint: 'x'.repeat(513) } }), 'body/chain/rpcHint'],
    // constraints
    ['missing maxGasWei', (i) => ({ ...i, constraints: { deadline: 1, maxSlippageBps: 0 } }), "body/constraints must have required property 'maxGasWei'"],
    ['missing deadline', (i) => ({ ...i, constraints: { maxGasWei: '1', maxSlippageBps: 0 } }), "body/constraints must have required property 'deadline'"],
    ['missing maxSlippageBps', (i) => ({ ...i, constraints: { maxGasWei: '1', deadline: 1 } }), "body/constraints must have required property 'maxSlippageBps'"],
    ['negative deadline', (i) => ({ ...i, constraints: { ...i.constraints, deadline: -1 } }), 'body/constraints/deadline must be >= 0'],
    ['deadline as a string', (i) => ({ ...i, constraints: { ...i.constraints, deadline: '1800000000' } }), 'body/constraints/deadline must be integer'],
    ['slippage above 100%', (i) => ({ ...i, constraints: { ...i.constraints, maxSlippageBps: 10001 } }), 'body/constraints/maxSlippageBps must be <= 10000'],
    ['fractional slippage', (i) => ({ ...i, constraints: { ...i.constraints, maxSlippageBps: 0.5 } }), 'body/constraints/maxSlippageBps must be integer'],
    // actions
    ['bad provider', () => withAction({ ...actions.swapIn(), provider: 'uniswap' }), 'body/action/provider must be equal to one of the allowed values'],
    ['provider on a transfer', (i) => ({ ...i, action: { ...i.action, provider: 'v3_router' } }), "body/action must NOT have additional property 'provider'"],
    ['missing action type', (i) => ({ ...i, action: { to: i.action.to, amount: '1' } }), "body/action must have required property 'type'"],
    ['unknown action type', () => withAction({ type: 'sign_raw', data: '0x' }), 'body/action/type must be equal to one of the allowed values'],
    ['action type not a string', () => withAction({ type: 1 }), 'body/action/type must be string'],
    ['action not an object', () => withAction('transfer' as unknown as Json), 'body/action must be object'],
    ['asset on a native transfer', (i) => ({ ...i, action: { ...actions.native(), asset: i.action.asset } }), "additional property 'asset'"],
    ['swap_exact_out with exact-in amounts', () => withAction({ ...actions.swapOut(), amountIn: '1' }), "body/action must NOT have additional property 'amountIn'"],
    ['swap_exact_in without minAmountOut', () => withAction({ ...actions.swapIn(), minAmountOut: undefined }), "body/action must have required property 'minAmountOut'"],
    ['approve without spender', () => withAction({ ...actions.approve(), spender: undefined }), "body/action must have required property 'spender'"],
    // assets
    ['asset kind erc721', (i) => ({ ...i, action: { ...i.action, asset: { kind: 'erc721', address: ADDR } } }), 'body/action/asset/kind'],
    ['asset without address', (i) => ({ ...i, action: { ...i.action, asset: { kind: 'erc20' } } }), "body/action/asset must have required property 'address'"],
    ['empty symbol', (i) => ({ ...i, action: { ...i.action, asset: { kind: 'erc20', address: ADDR, symbol: '' } } }), 'body/action/asset/symbol'],
    ['33-char symbol', (i) => ({ ...i, action: { ...i.action, asset: { kind: 'erc20', address: ADDR, symbol: 'S'.repeat(33) } } }), 'body/action/asset/symbol'],
    ['37 decimals', (i) => ({ ...i, action: { ...i.action, asset: { kind: 'erc20', address: ADDR, decimals: 37 } } }), 'body/action/asset/decimals must be <= 36'],
    ['decimals as a string', (i) => ({ ...i, action: { ...i.action, asset: { kind: 'erc20', address: ADDR, decimals: '6' } } }), 'body/action/asset/decimals must be integer'],
    // the rest of the envelope
    ['version 2', (i) => ({ ...i, version: '2' }), 'body/version must be equal to constant'],
    ['version as a number', (i) => ({ ...i, version: 1 }), 'body/version'],
    ['float timestamp', (i) => ({ ...i, timestamp: 1.5 }), 'body/timestamp must be integer'],
    ['negative timestamp', (i) => ({ ...i, timestamp: -1 }), 'body/timestamp must be >= 0'],
    ['id not a uuid', (i) => ({ ...i, id: 'x' }), 'body/id must match format "uuid"'],
    // Another spelling of a UUID was another intent: a retry or a lookup with it was told nothing was signed (found by review).
    ['id as a urn', (i) => ({ ...i, id: `urn:uuid:${i.id}` }), 'body/id must match format "uuid"'],
    ['id in upper case', (i) => ({ ...i, id: i.id.toUpperCase() }), 'body/id must match format "uuid"'],
    ['id in braces', (i) => ({ ...i, id: `{${i.id}}` }), 'body/id must match format "uuid"'],
    ['missing wallet', (i) => ({ ...i, wallet: undefined }), "body must have required property 'wallet'"],
    ['profile over 64 chars', (i) => ({ ...i, wallet: { ...i.wallet, profile: 'p'.repeat(65) } }), 'body/wallet/profile'],
    ['note over 1024 chars', (i) => ({ ...i, metadata: { note: 'n'.repeat(1025) } }), 'body/metadata/note'],
    ['source over 128 chars', (i) => ({ ...i, metadata: { source: 's'.repeat(129) } }), 'body/metadata/source'],
    ['speed turbo', (i) => ({ ...i, preferences: { speed: 'turbo' } }), 'body/preferences/speed'],
    ['privateRelay as a string', (i) => ({ ...i, preferences: { privateRelay: 'yes' } }), 'body/preferences/privateRelay must be boolean'],
    ['an array', () => [base()], 'body must be object'],
    ['null', () => null, 'body must be object'],
  ])('rejects %s', (_name, mutate, fragment) => {
    // JSON round trip: members set to undefined above are absent on the wire.
    const value = mutate(base())
    const r = check(value === undefined ? value : JSON.parse(JSON.stringify(value)))
    expect(r.ok).toBe(false)
    expect(r.message).toContain(fragment)
  })

  it('names the one failing member of an action, without the noise of the other four branches', () => {
    // The reason for ajv's `discriminator` over a plain oneOf: a plain oneOf
    // reports every branch's mismatch plus "must match exactly one schema".
    const all = createAjv({ allErrors: true }).compile(txIntentSchema)
    expect(all(withAction({ ...actions.transfer(), to: '0x12' }))).toBe(false)
    expect(describeValidationErrors(all.errors)).toBe('body/action/to must match pattern "^0x[0-9a-fA-F]{40}$"')
    expect(all(withAction({ ...actions.swapOut(), maxAmountIn: 7 }))).toBe(false)
    expect(describeValidationErrors(all.errors)).toBe('body/action/maxAmountIn must be string')
    expect(validate(withAction({ type: 'sign_raw' }))).toBe(false)
    expect(describeValidationErrors(validate.errors)).not.toContain('oneOf')
  })

  it('collects every failing path when asked to', () => {
    const all = createAjv({ allErrors: true }).compile(txIntentSchema)
    expect(all({ ...base(), id: 'x', wallet: { address: '0x1' }, constraints: { maxGasWei: 1, deadline: 1, maxSlippageBps: 0 } })).toBe(false)
    const message = describeValidationErrors(all.errors)
    for (const path of ['body/id', 'body/wallet/address', 'body/constraints/maxGasWei']) expect(message).toContain(path)
  })

  it('keeps its enums in step with types.ts', () => {
    expect([...actionSchema.properties.type.enum]).toEqual([...ACTION_TYPES])
    expect(actionSchema.oneOf.map((b) => b.properties.type.const)).toEqual([...ACTION_TYPES])
    expect([...chainIdSchema.enum]).toEqual([...SUPPORTED_CHAIN_IDS])
  })
})

describe('signAndSendBodySchema', () => {
  const v = createAjv().compile(signAndSendBodySchema)
  const run = (body: unknown) => ({ ok: v(body), message: describeValidationErrors(v.errors) })

  it('is the intent plus an optional UUID token, nothing else', () => {
    expect(v({ intent: makeIntent() })).toBe(true)
    expect(v({ intent: makeIntent(), approvalTokenId: '123e4567-e89b-12d3-a456-426614174000' })).toBe(true)
    expect(run({ intent: makeIntent(), approvalTokenId: 'abc' }).message).toBe('body/approvalTokenId must match format "uuid"')
    expect(run({ intent: makeIntent(), approvalTokenId: 'urn:uuid:123e4567-e89b-12d3-a456-426614174000' }).message).toBe('body/approvalTokenId must match format "uuid"')
    expect(run({ intent: makeIntent(), approvalTokenId: '123E4567-E89B-12D3-A456-426614174000' }).message).toBe('body/approvalTokenId must match format "uuid"')
    expect(run({ intent: makeIntent(), signature: '0x' }).message).toBe("body must NOT have additional property 'signature'")
    expect(run(makeIntent()).ok).toBe(false)
    expect(run({ approvalTokenId: '123e4567-e89b-12d3-a456-426614174000' }).message).toBe("body must have required property 'intent'")
  })

  it('validates the nested intent as strictly as the bare one', () => {
    expect(run({ intent: { ...makeIntent(), gasPrice: '1' } }).message).toBe("body/intent must NOT have additional property 'gasPrice'")
    expect(run({ intent: withAction({ ...actions.native(), amount: 1 }) }).message).toBe('body/intent/action/amount must be string')
  })
})

describe('route parameter schemas', () => {
  const ajv = createAjv()
  const hash = ajv.compile(txHashParamsSchema)
  const balance = ajv.compile(balanceParamsSchema)
  const balanceQuery = ajv.compile(balanceQuerySchema)
  const receiptQuery = ajv.compile(txReceiptQuerySchema)

  it('txHashParamsSchema: 0x and 64 hex digits', () => {
    expect(hash({ hash: '0x' + 'aB'.repeat(32) })).toBe(true)
    expect(hash({ hash: '0x' + 'a'.repeat(63) })).toBe(false)
    expect(hash({ hash: '0x' + 'a'.repeat(65) })).toBe(false)
    expect(hash({ hash: 'a'.repeat(64) })).toBe(false)
    expect(hash({})).toBe(false)
    expect(describeValidationErrors(hash.errors, 'params')).toBe("params must have required property 'hash'")
  })

  it('balanceParamsSchema: token and account addresses, the native pseudo address included', () => {
    expect(balance({ token: '0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE', account: ADDR })).toBe(true)
    expect(balance({ token: ADDR, account: '0x12' })).toBe(false)
    expect(describeValidationErrors(balance.errors, 'params')).toContain('params/account must match pattern')
    expect(balance({ token: ADDR })).toBe(false)
  })

  it('chainId query: an optional string of 1 to 10 digits', () => {
    for (const q of [balanceQuery, receiptQuery]) {
      expect(q({})).toBe(true)
      expect(q({ chainId: '8453' })).toBe(true)
      expect(q({ chainId: 'base' })).toBe(false)
      expect(q({ chainId: '-1' })).toBe(false)
      expect(q({ chainId: '12345678901' })).toBe(false)
      expect(q({ chainId: 8453 })).toBe(false)
      expect(q({ chainId: '1', other: 'x' })).toBe(false)
    }
  })
})
