import { encodeFunctionData, erc20Abi, keccak256, toBytes } from 'viem'
import { describe, expect, it } from 'vitest'
import type { Address, Hex, TxRequest } from '../types.js'
import { canonicalize } from './jcs.js'
import { keccakCanonical, keccakHex, txRequestHash } from './hash.js'

// Transfer of 5 USDC (5_000_000 = 0x4c4b40) to 0x2222…2222 on Base, written
// with mixed-case addresses and upper-case calldata on purpose.
const TRANSFER_DATA = ('0xA9059CBB' +
  '0000000000000000000000002222222222222222222222222222222222222222' +
  '00000000000000000000000000000000000000000000000000000000004C4B40') as Hex
const tx: TxRequest = {
  to: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
  data: TRANSFER_DATA,
  value: '0',
  chainId: 8453,
  type: 'eip1559',
}
const from: Address = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266'

// Written out by hand (DESIGN.md §3): members in code-unit order, addresses
// and calldata lower-case, chainId a number, value a decimal string.
const TRANSFER_JCS =
  '{"chainId":8453,' +
  '"data":"0xa9059cbb000000000000000000000000222222222222222222222222222222222222222200000000000000000000000000000000000000000000000000000000004c4b40",' +
  '"from":"0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266",' +
  '"to":"0x833589fcd6edb6e08f4c7c32d4f71b54bda02913",' +
  '"type":"eip1559",' +
  '"value":"0"}'
// keccak256 of the UTF-8 bytes above, from a separate from-the-spec Keccak
// implementation (not @noble/hashes, which both hash.ts and viem use).
const TRANSFER_HASH = '0x5b84adc87be510fc0b5cb5adfc89a5d9071dda644ef19a619827987d44a60e16'

const nativeTx: TxRequest = { to: '0x2222222222222222222222222222222222222222', data: '0x', value: '1000000000000000000', chainId: 1, type: 'eip1559' }
const NATIVE_JCS =
  '{"chainId":1,"data":"0x","from":"0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266",' +
  '"to":"0x2222222222222222222222222222222222222222","type":"eip1559","value":"1000000000000000000"}'
const NATIVE_HASH = '0x50c622af80148edb6ca60b02ced0261951ed6b7b6bc9eeaf2fbda70a0926e084'

describe('keccak helpers', () => {
  it('match the well-known Keccak-256 vectors', () => {
    expect(keccakHex(new Uint8Array())).toBe('0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470')
    expect(keccakHex(new TextEncoder().encode('abc'))).toBe('0x4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45')
  })

  it('keccakCanonical hashes the UTF-8 bytes of the JCS text', () => {
    expect(keccakCanonical({})).toBe('0xb48d38f93eaa084033fc5970bf96e559c33c4cdc07d889ab00b4d63f9590739d')
    const value = { b: ['€', 1e21], a: null }
    expect(canonicalize(value)).toBe('{"a":null,"b":["€",1e+21]}')
    expect(keccakCanonical(value)).toBe(keccak256(toBytes('{"a":null,"b":["€",1e+21]}')))
  })
})

describe('txRequestHash', () => {
  it('the sample calldata is the real ERC-20 transfer it claims to be', () => {
    const encoded = encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: ['0x2222222222222222222222222222222222222222', 5_000_000n] })
    expect(encoded).toBe(TRANSFER_DATA.toLowerCase())
  })

  it('hashes exactly JCS({chainId, data, from, to, type, value}): an ERC-20 transfer', () => {
    expect(keccak256(toBytes(TRANSFER_JCS))).toBe(TRANSFER_HASH)
    expect(txRequestHash(tx, from)).toBe(TRANSFER_HASH)
  })

  it('hashes exactly JCS({chainId, data, from, to, type, value}): a native transfer', () => {
    expect(keccak256(toBytes(NATIVE_JCS))).toBe(NATIVE_HASH)
    expect(txRequestHash(nativeTx, from)).toBe(NATIVE_HASH)
  })

  it('does not depend on the case of addresses and calldata', () => {
    const lower = { ...tx, to: tx.to.toLowerCase() as Address, data: tx.data.toLowerCase() as Hex }
    const upper = { ...tx, to: `0x${tx.to.slice(2).toUpperCase()}` as Address, data: `0x${tx.data.slice(2).toUpperCase()}` as Hex }
    expect(txRequestHash(lower, from.toLowerCase() as Address)).toBe(TRANSFER_HASH)
    expect(txRequestHash(upper, `0x${from.slice(2).toUpperCase()}` as Address)).toBe(TRANSFER_HASH)
  })

  it('does not depend on member order', () => {
    const reversed = Object.fromEntries(Object.entries(tx).reverse()) as unknown as TxRequest
    expect(Object.keys(reversed)).toEqual(['type', 'chainId', 'value', 'data', 'to'])
    expect(txRequestHash(reversed, from)).toBe(TRANSFER_HASH)
  })

  it('ignores what is chosen at send time (nonce, gas, fees) if it rides along', () => {
    const withSendTimeFields = { ...tx, nonce: 7, gas: '65000', maxFeePerGas: '1000000000' } as TxRequest
    expect(txRequestHash(withSendTimeFields, from)).toBe(TRANSFER_HASH)
  })

  it.each<[string, TxRequest, Address]>([
    ['value', { ...tx, value: '1' }, from],
    ['chainId', { ...tx, chainId: 10 }, from],
    ['to', { ...tx, to: '0x0000000000000000000000000000000000000001' }, from],
    ['data: empty', { ...tx, data: '0x' }, from],
    ['data: one amount digit', { ...tx, data: TRANSFER_DATA.replace(/4C4B40$/, '4C4B41') as Hex }, from],
    ['type', { ...tx, type: 'legacy' as 'eip1559' }, from],
    ['from', tx, '0x0000000000000000000000000000000000000002'],
  ])('changes when %s changes', (_field, changed, signer) => {
    expect(txRequestHash(changed, signer)).not.toBe(TRANSFER_HASH)
  })
})
