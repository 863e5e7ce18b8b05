import { describe, expect, it } from 'vitest'
import { transfer, transferNative, type ApprovalResult } from '@countersign/client'
import { RecentSends, requestKey } from './recentSends.js'

const WALLET = '0x679421e95D624523eE6c35107Bff6F1de6ED6588'
const TO = '0x00000000000000000000000000000000000c0FFE'
const TOKEN = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913'
const T0 = 1_800_000_000_000

/** A clock the test moves. */
function clock() {
  let now = T0
  return { now: () => now, advance: (ms: number) => (now += ms) }
}

const native = (o: { amount?: string; to?: string; note?: string; at?: number } = {}) =>
  transferNative({ wallet: WALLET, chainId: 8453, to: (o.to ?? TO) as `0x${string}`, amount: o.amount ?? '1000000', ...(o.note ? { note: o.note } : {}), now: () => o.at ?? T0 })

describe('requestKey: which calls are the same request', () => {
  it('ignores the intent id, time, note, display hints and the case of addresses', () => {
    const a = transfer({ wallet: WALLET, chainId: 8453, token: { kind: 'erc20', address: TOKEN, symbol: 'USDC', decimals: 6 }, to: TO, amount: '5', note: 'first' })
    const b = transfer({ wallet: WALLET.toLowerCase() as `0x${string}`, chainId: 8453, token: TOKEN.toLowerCase() as `0x${string}`, to: TO.toUpperCase().replace('0X', '0x') as `0x${string}`, amount: '5', now: () => T0 + 5_000 })
    expect(a.id).not.toBe(b.id)
    expect(requestKey(a)).toBe(requestKey(b))
  })

  it('another amount, recipient, chain, wallet or action is another request', () => {
    const base = requestKey(native())
    expect(requestKey(native({ amount: '1000001' }))).not.toBe(base)
    expect(requestKey(native({ to: '0x000000000000000000000000000000000000d00d' }))).not.toBe(base)
    expect(requestKey(transferNative({ wallet: WALLET, chainId: 10, to: TO, amount: '1000000' }))).not.toBe(base)
    expect(requestKey(transferNative({ wallet: TO, chainId: 8453, to: WALLET, amount: '1000000' }))).not.toBe(base)
    expect(requestKey(transfer({ wallet: WALLET, chainId: 8453, token: TOKEN, to: TO, amount: '1000000' }))).not.toBe(base)
  })
})

describe('RecentSends', () => {
  it('an identical call within the first intent\'s deadline gets the first intent, with its approval once known', () => {
    const t = clock()
    const recent = new RecentSends(t.now)
    const first = native()
    expect(recent.repeatOf(first)).toBeUndefined()
    recent.remember(first)
    t.advance(61_000)
    const again = native({ note: 'retry', at: t.now() })
    expect(recent.repeatOf(again)).toEqual({ intent: first, ageMs: 61_000, approval: undefined })
    const approval = { approved: true, approvalRequired: false, intentId: first.id } as unknown as ApprovalResult
    recent.approved(first, approval)
    expect(recent.repeatOf(again)?.approval).toBe(approval)
  })

  it('forgets the intent at its deadline (the gateway would not sign it any more)', () => {
    const t = clock()
    const recent = new RecentSends(t.now)
    const first = native()
    recent.remember(first)
    t.advance((first.constraints.deadline - T0 / 1000) * 1000 - 1)
    expect(recent.repeatOf(native())?.intent.id).toBe(first.id)
    t.advance(1)
    expect(recent.repeatOf(native())).toBeUndefined()
  })

  it('a remembered newer intent (a deliberate new transaction) is what the next repeat gets', () => {
    const recent = new RecentSends(clock().now)
    const first = native()
    const second = native()
    recent.remember(first)
    recent.remember(second)
    expect(recent.repeatOf(native())?.intent.id).toBe(second.id)
    // Forgetting or approving the older one touches nothing.
    recent.forget(first)
    recent.approved(first, {} as ApprovalResult)
    expect(recent.repeatOf(native())).toMatchObject({ intent: { id: second.id }, approval: undefined })
    recent.forget(second)
    expect(recent.repeatOf(native())).toBeUndefined()
  })
})
