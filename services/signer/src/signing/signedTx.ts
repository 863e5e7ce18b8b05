import type { Hex } from 'viem'

/** The EIP-2718 type byte of an EIP-1559 transaction. */
const EIP1559_TYPE = 0x02

/** An RLP integer field: big-endian bytes without leading zeros (zero is the empty string). */
function rlpInteger(value: bigint): Uint8Array {
  if (value < 0n) throw new Error('an RLP integer is not negative')
  if (value === 0n) return Uint8Array.of(0x80)
  const hex = value.toString(16)
  const bytes = Buffer.from(hex.length % 2 ? `0${hex}` : hex, 'hex')
  if (bytes.length === 1 && bytes[0]! < 0x80) return bytes
  if (bytes.length > 55) throw new Error('a signature field is at most 32 bytes')
  return Buffer.concat([Uint8Array.of(0x80 + bytes.length), bytes])
}

/** Where an RLP list's payload starts and how long it is, from its header at `at`. */
function listPayload(bytes: Uint8Array, at: number): { start: number; length: number } {
  const head = bytes[at]
  if (head === undefined || head < 0xc0) throw new Error('not an RLP list')
  if (head <= 0xf7) return { start: at + 1, length: head - 0xc0 }
  const sizeOfLength = head - 0xf7
  let length = 0
  for (let i = 1; i <= sizeOfLength; i++) length = length * 256 + bytes[at + i]!
  return { start: at + 1 + sizeOfLength, length }
}

function listHeader(length: number): Uint8Array {
  if (length <= 55) return Uint8Array.of(0xc0 + length)
  const size: number[] = []
  for (let n = length; n > 0; n = Math.floor(n / 256)) size.unshift(n % 256)
  return Uint8Array.from([0xf7 + size.length, ...size])
}

/**
 * The signed serialization of an EIP-1559 transaction from its unsigned one:
 * 0x02 || rlp([...fields]) becomes 0x02 || rlp([...fields, yParity, r, s]),
 * exactly what viem's serializeTransaction(tx, signature) gives (the tests
 * hold it to that), without serializing the fields a second time.
 */
export function signedEip1559(unsigned: Uint8Array, signature: { r: Hex; s: Hex; yParity: 0 | 1 }): Uint8Array {
  if (unsigned[0] !== EIP1559_TYPE) throw new Error('not an EIP-1559 transaction')
  const { start, length } = listPayload(unsigned, 1)
  if (start + length !== unsigned.length) throw new Error('trailing bytes after the transaction')
  const tail = [rlpInteger(BigInt(signature.yParity)), rlpInteger(BigInt(signature.r)), rlpInteger(BigInt(signature.s))]
  const payloadLength = length + tail.reduce((n, t) => n + t.length, 0)
  return Buffer.concat([Uint8Array.of(EIP1559_TYPE), listHeader(payloadLength), unsigned.subarray(start), ...tail])
}
