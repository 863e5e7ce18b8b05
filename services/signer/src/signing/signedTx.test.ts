import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { bytesToHex, hexToBytes, serializeTransaction, toHex, type Hex, type TransactionSerializableEIP1559 } from 'viem'
import { signedEip1559 } from './signedTx.js'

const hex32 = (n: bigint): Hex => toHex(n, { size: 32 })

describe('the signed EIP-1559 serialization, appended to the unsigned one', () => {
  it('is byte for byte viem’s serializeTransaction(tx, signature), for short and long field lists and every shape of r and s', () => {
    // r and s with leading zero bytes, single bytes below and at 0x80, full 32 bytes.
    const values = [1n, 0x7fn, 0x80n, 0xffn, 0x100n, 2n ** 248n - 1n, 2n ** 255n + 12345n, BigInt(bytesToHex(randomBytes(32)))]
    // data of 0 to 70,000 bytes: list headers with 1, 2 and 3 length bytes.
    const dataSizes = [0, 1, 50, 200, 300, 70_000]
    let cases = 0
    for (const size of dataSizes) {
      for (const r of values) {
        for (const s of values.slice().reverse()) {
          const tx: TransactionSerializableEIP1559 = {
            type: 'eip1559',
            chainId: cases % 2 ? 1 : 8453,
            nonce: cases,
            to: bytesToHex(randomBytes(20)),
            value: BigInt(cases) * 10n ** 15n,
            data: size ? bytesToHex(randomBytes(size)) : undefined,
            gas: 21000n + BigInt(size) * 16n,
            maxFeePerGas: 2_000_000_000n,
            maxPriorityFeePerGas: BigInt(cases % 3),
          }
          const yParity = (cases % 2) as 0 | 1
          const unsigned = hexToBytes(serializeTransaction(tx))
          const ours = signedEip1559(unsigned, { r: hex32(r), s: hex32(s), yParity })
          expect(bytesToHex(ours)).toBe(serializeTransaction(tx, { r: hex32(r), s: hex32(s), yParity }))
          cases++
        }
      }
    }
    expect(cases).toBe(dataSizes.length * values.length ** 2)
  })

  it('accepts r and s given without padding, as the same numbers; an unsigned list short enough for a one-byte header grows into a long one', () => {
    const tx: TransactionSerializableEIP1559 = { type: 'eip1559', chainId: 1, nonce: 0, to: '0x00000000000000000000000000000000000000aa', gas: 21000n, maxFeePerGas: 1n, maxPriorityFeePerGas: 1n }
    const unsigned = hexToBytes(serializeTransaction(tx))
    expect(unsigned[1]).toBeLessThanOrEqual(0xf7)
    expect(bytesToHex(signedEip1559(unsigned, { r: '0x1', s: '0xabc', yParity: 1 }))).toBe(serializeTransaction(tx, { r: hex32(1n), s: hex32(0xabcn), yParity: 1 }))
  })

  it('refuses what is not an unsigned EIP-1559 serialization', () => {
    const sig = { r: hex32(1n), s: hex32(1n), yParity: 0 as const }
    const tx: TransactionSerializableEIP1559 = { type: 'eip1559', chainId: 1, nonce: 0, gas: 21000n, maxFeePerGas: 1n, maxPriorityFeePerGas: 1n }
    const unsigned = hexToBytes(serializeTransaction(tx))
    expect(() => signedEip1559(Uint8Array.from([0x01, ...unsigned.subarray(1)]), sig)).toThrow(/not an EIP-1559/)
    expect(() => signedEip1559(Uint8Array.from([0x02, 0x80]), sig)).toThrow(/not an RLP list/)
    expect(() => signedEip1559(Uint8Array.from([...unsigned, 0x00]), sig)).toThrow(/trailing bytes/)
  })
})
