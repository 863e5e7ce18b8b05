import { keccak256, toBytes } from 'viem'
import { describe, expect, it } from 'vitest'
import type { TxRequest } from '../types.js'
import { keccakCanonical, txRequestHash } from './hash.js'

const tx: TxRequest = {
  to: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
  data: '0xA9059CBB0000000000000000000000002222222222222222222222222222222222222222000000000000000000000000000000000000000000000000000000000004c4b40',
  value: '0',
  chainId: 8453,
  type: 'eip1559',
}
const from = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266' as const

describe('txRequestHash', () => {
  it('hashes exactly JCS({chainId, data, from, to, type, value}) with lowercase addresses and data', () => {
    // Written out by hand: members in code-unit order, addresses and hex lowercased, value a decimal string.
    const expectedCanonical =
      '{"chainId":8453,' +
      '"data":"0xa9059cbb0000000000000000000000002222222222222222222222222222222222222222000000000000000000000000000000000000000000000000000000000004c4b40",' +
      '"from":"0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266",' +
      '"to":"0x833589fcd6edb6e08f4c7c32d4f71b54bda02913",' +
      '"type":"eip1559",' +
      '"value":"0"}'
    expect(txRequestHash(tx, from)).toBe(keccak256(toBytes(expectedCanonical)))
  })

  it('a known vector: the empty object', () => {
    // keccak256("{}") computed independently.
    expect(keccakCanonical({})).toBe('0xb48d38f93eaa084033fc5970bf96e559c33c4cdc07d889ab00b4d63f9590739d')
  })

  it('does not depend on address case or member order', () => {
    const shuffled = { type: tx.type, value: tx.value, chainId: tx.chainId, data: tx.data.toLowerCase() as `0x${string}`, to: tx.to.toLowerCase() as `0x${string}` }
    expect(txRequestHash(shuffled, from.toLowerCase() as `0x${string}`)).toBe(txRequestHash(tx, from))
  })

  it('changes with every field', () => {
    const base = txRequestHash(tx, from)
    expect(txRequestHash({ ...tx, value: '1' }, from)).not.toBe(base)
    expect(txRequestHash({ ...tx, chainId: 10 }, from)).not.toBe(base)
    expect(txRequestHash({ ...tx, to: '0x0000000000000000000000000000000000000001' }, from)).not.toBe(base)
    expect(txRequestHash({ ...tx, data: '0x' }, from)).not.toBe(base)
    expect(txRequestHash(tx, '0x0000000000000000000000000000000000000002')).not.toBe(base)
  })
})
