import { describe, expect, it } from 'vitest'
import { settleAll } from './settleAll.js'

describe('settleAll', () => {
  it('resolves only after every promise settled, even when an earlier one already failed', async () => {
    const order: string[] = []
    const slow = new Promise((r) => setTimeout(r, 30)).then(() => order.push('slow done'))
    const failing = Promise.reject(new Error('first'))
    await expect(settleAll([failing, slow, null])).rejects.toThrow('first')
    expect(order).toEqual(['slow done'])
  })

  it('throws the first failure in list order, not in time order', async () => {
    const late = new Promise((_, reject) => setTimeout(() => reject(new Error('late')), 20))
    const early = Promise.reject(new Error('early'))
    await expect(settleAll([late, early])).rejects.toThrow('late')
  })

  it('resolves when all succeed', async () => {
    await expect(settleAll([Promise.resolve(1), null, Promise.resolve(2)])).resolves.toBeUndefined()
  })
})
