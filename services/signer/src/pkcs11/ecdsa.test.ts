import { describe, expect, it } from 'vitest'
import { hexToBytes, keccak256, parseSignature, recoverAddress, toHex } from 'viem'
import { generatePrivateKey, privateKeyToAccount, sign } from 'viem/accounts'
import { addressOfEcPoint, isSecp256k1Params, SECP256K1_EC_PARAMS } from './ecPoint.js'
import { ethSignatureOf, SECP256K1_N } from './ecdsa.js'

const HALF_N = SECP256K1_N / 2n
const raw = (r: bigint, s: bigint) => hexToBytes(`0x${r.toString(16).padStart(64, '0')}${s.toString(16).padStart(64, '0')}`)

describe('PKCS#11 signatures as Ethereum signatures', () => {
  it('keeps a low s, flips a high s to n - s, and finds the recovery bit of the key', async () => {
    const privateKey = generatePrivateKey()
    const { address, publicKey } = privateKeyToAccount(privateKey)
    for (let i = 0; i < 32; i++) {
      const digest = keccak256(toHex(`message ${i}`))
      const { r, s } = parseSignature(await sign({ hash: digest, privateKey, to: 'hex' }))
      for (const given of [BigInt(s), SECP256K1_N - BigInt(s)]) {
        const sig = await ethSignatureOf(raw(BigInt(r), given), digest, hexToBytes(publicKey))
        expect(BigInt(sig.s) <= HALF_N).toBe(true)
        expect(await recoverAddress({ hash: digest, signature: sig })).toBe(address)
      }
    }
  })

  it('refuses a signature by another key or over another digest, and one of the wrong size', async () => {
    const digest = keccak256('0x01')
    const privateKey = generatePrivateKey()
    const own = hexToBytes(privateKeyToAccount(privateKey).publicKey)
    const { r, s } = parseSignature(await sign({ hash: digest, privateKey, to: 'hex' }))
    await expect(ethSignatureOf(raw(BigInt(r), BigInt(s)), digest, own)).resolves.toMatchObject({ r })
    const other = hexToBytes(privateKeyToAccount(generatePrivateKey()).publicKey)
    await expect(ethSignatureOf(raw(BigInt(r), BigInt(s)), digest, other)).rejects.toThrow(/does not verify/)
    await expect(ethSignatureOf(raw(BigInt(r), BigInt(s)), keccak256('0x02'), own)).rejects.toThrow(/does not verify/)
    // r that is no x coordinate on the curve (x = 5 has no point): no recovery at all.
    await expect(ethSignatureOf(raw(5n, BigInt(s)), digest, own)).rejects.toThrow(/does not verify/)
    await expect(ethSignatureOf(new Uint8Array(70), digest, other)).rejects.toThrow(/not 64/)
    await expect(ethSignatureOf(raw(0n, BigInt(s)), digest, other)).rejects.toThrow(/out-of-range/)
    await expect(ethSignatureOf(raw(BigInt(r), SECP256K1_N), digest, other)).rejects.toThrow(/out-of-range/)
  })

  it('derives the address from CKA_EC_POINT, DER-wrapped or bare', () => {
    const privateKey = generatePrivateKey()
    const account = privateKeyToAccount(privateKey)
    const point = hexToBytes(account.publicKey)
    const address = account.address
    expect(addressOfEcPoint(Uint8Array.from([0x04, 0x41, ...point]))).toBe(address)
    expect(addressOfEcPoint(point)).toBe(address)
    expect(() => addressOfEcPoint(point.subarray(0, 33))).toThrow(/not an uncompressed/)
    expect(isSecp256k1Params(SECP256K1_EC_PARAMS)).toBe(true)
    expect(isSecp256k1Params(Uint8Array.from([0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07]))).toBe(false)
  })
})
