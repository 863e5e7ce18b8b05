import { randomBytes } from 'node:crypto'
import { encodeFunctionData, type Address } from 'viem'
import { describe, expect, it } from 'vitest'
import { erc20CallsAbi } from './abis.js'
import { UINT256_MAX } from './amounts.js'
import { erc20ApproveData, erc20TransferData } from './erc20.js'
import { BuildError } from './errors.js'

const asset = { kind: 'erc20' as const, address: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913' as Address }
const amounts = ['0', '1', '5000000', '340282366920938463463374607431768211456', UINT256_MAX.toString()]

describe('ERC-20 calldata written by hand', () => {
  it('is byte for byte what viem’s ABI encoder makes, for transfer and approve', () => {
    for (let n = 0; n < 200; n++) {
      const to = `0x${randomBytes(20).toString('hex')}` as Address
      const amount = n < amounts.length ? amounts[n]! : BigInt(`0x${randomBytes(1 + (n % 32)).toString('hex')}`).toString()
      expect(erc20TransferData({ type: 'transfer', asset, to, amount })).toBe(
        encodeFunctionData({ abi: erc20CallsAbi, functionName: 'transfer', args: [to, BigInt(amount)] }),
      )
      expect(erc20ApproveData({ type: 'approve', asset, spender: to, amount })).toBe(
        encodeFunctionData({ abi: erc20CallsAbi, functionName: 'approve', args: [to, BigInt(amount)] }),
      )
    }
  })

  it('writes a checksummed or upper-case address in lower case', () => {
    const data = erc20TransferData({ type: 'transfer', asset, to: '0xABCDEF0000000000000000000000000000000001', amount: '1' })
    expect(data.slice(10, 74)).toBe('000000000000000000000000abcdef0000000000000000000000000000000001')
  })

  it('refuses an amount beyond uint256 or not in decimal digits (a 400, not a crash)', () => {
    const to = '0x2222222222222222222222222222222222222222' as Address
    expect(() => erc20TransferData({ type: 'transfer', asset, to, amount: (UINT256_MAX + 1n).toString() })).toThrow(BuildError)
    expect(() => erc20ApproveData({ type: 'approve', asset, spender: to, amount: '0x10' })).toThrow(BuildError)
  })
})
