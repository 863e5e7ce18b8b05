import { describe, expect, it } from 'vitest'
import { createWalletQueue } from './walletQueue.js'

describe('the per-wallet nonce book', () => {
  it('a nonce whose sign answer was lost is not marked used: the next assignment follows the chain again', async () => {
    const queue = createWalletQueue()
    const wallet = '0x000000000000000000000000000000000000b0b0'
    // Broadcast at 4: the book remembers 5 even if the node's pending count still says 4.
    await queue.run(8453, wallet, async (nonces) => {
      expect(nonces.next(4)).toBe(4)
      nonces.used(4)
    })
    expect(await queue.run(8453, wallet, async (nonces) => nonces.next(4))).toBe(5)
    // 5 handed out, the answer lost (nothing marked): 5 again while the chain says 5 is free.
    expect(await queue.run(8453, wallet, async (nonces) => nonces.next(5))).toBe(5)
    // Once the chain is past it (another transaction took it), the chain's count wins.
    expect(await queue.run(8453, wallet, async (nonces) => nonces.next(7))).toBe(7)
  })

  it('runs one wallet’s tasks one after another, other wallets in parallel', async () => {
    const queue = createWalletQueue()
    const order: string[] = []
    const slow = (label: string, ms: number) => async () => {
      order.push(`${label} start`)
      await new Promise((r) => setTimeout(r, ms))
      order.push(`${label} end`)
    }
    await Promise.all([queue.run(1, '0xa', slow('a1', 30)), queue.run(1, '0xA', slow('a2', 1)), queue.run(1, '0xb', slow('b', 1))])
    expect(order.indexOf('a1 end')).toBeLessThan(order.indexOf('a2 start'))
    expect(order.indexOf('b end')).toBeLessThan(order.indexOf('a1 end'))
  })
})
