import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { bytesToHex, hexToBytes, keccak256, parseEther, recoverAddress, recoverTransactionAddress, toHex, type TransactionSerializableEIP1559 } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { keystoreRingKey } from '../keystore/keystoreBackend.js'
import { signTransactionWith } from './keyBackend.js'
import { recoverPoint, recoverPointNoble, recoveryBitOf, secp256k1Implementation, signingKeyOf, signNoble } from './secp256k1.js'

const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n
const isLowS = (rs: Uint8Array) => BigInt(bytesToHex(rs.subarray(32))) <= N / 2n
const asViem = (rs: Uint8Array, yParity: 0 | 1) => ({ r: bytesToHex(rs.subarray(0, 32)), s: bytesToHex(rs.subarray(32)), yParity })

describe('secp256k1 signing (libsecp256k1 in WebAssembly)', () => {
  it('is the WebAssembly build in this process', () => {
    expect(secp256k1Implementation).toBe('libsecp256k1')
  })

  it('gives byte-identical signatures to viem (RFC 6979 nonces, low s) over many keys and digests, each recovering to the key', async () => {
    for (let k = 0; k < 8; k++) {
      const privateKey = generatePrivateKey()
      const account = privateKeyToAccount(privateKey)
      const key = signingKeyOf(hexToBytes(privateKey))
      expect(key.address).toBe(account.address)
      for (let i = 0; i < 64; i++) {
        // Random digests, and a few edge ones (all zero, all ones).
        const digest = i === 0 ? new Uint8Array(32) : i === 1 ? new Uint8Array(32).fill(0xff) : randomBytes(32)
        const ours = await key.sign(digest)
        const theirs = await account.sign({ hash: bytesToHex(digest) })
        expect(bytesToHex(Uint8Array.from([...ours.rs, 27 + ours.yParity]))).toBe(theirs)
        expect(await signNoble(digest, hexToBytes(privateKey))).toEqual(ours)
        expect(isLowS(ours.rs)).toBe(true)
        expect(await recoverAddress({ hash: bytesToHex(digest), signature: asViem(ours.rs, ours.yParity) })).toBe(account.address)
      }
    }
  })

  it('signs transactions through a keystore ring key exactly as viem signTransaction does', async () => {
    const privateKey = generatePrivateKey()
    const account = privateKeyToAccount(privateKey)
    const key = keystoreRingKey({ address: account.address, signingKey: signingKeyOf(hexToBytes(privateKey)), label: null, dev: false })
    for (let i = 0; i < 200; i++) {
      const tx: TransactionSerializableEIP1559 = {
        type: 'eip1559',
        chainId: [1, 10, 8453, 31337][i % 4]!,
        nonce: i * 7919,
        to: bytesToHex(randomBytes(20)),
        value: parseEther(String(i / 1000)),
        data: i % 2 ? bytesToHex(randomBytes(68)) : '0x',
        gas: 21000n + BigInt(i),
        maxFeePerGas: 2_000_000_000n + BigInt(i),
        maxPriorityFeePerGas: 1_000_000_000n,
      }
      const { signedTx: signed, txHash } = await signTransactionWith(key, tx)
      expect(signed).toBe(await account.signTransaction(tx))
      expect(txHash).toBe(keccak256(signed))
      expect(await recoverTransactionAddress({ serializedTransaction: signed as `0x02${string}` })).toBe(account.address)
    }
  })

  it('keeps its own copy of the key: wiping the caller’s bytes does not change what it signs', async () => {
    const privateKey = generatePrivateKey()
    const bytes = hexToBytes(privateKey)
    const key = signingKeyOf(bytes)
    bytes.fill(0)
    const digest = hexToBytes(keccak256(toHex('after the wipe')))
    const { rs, yParity } = await key.sign(digest)
    expect(await recoverAddress({ hash: bytesToHex(digest), signature: asViem(rs, yParity) })).toBe(privateKeyToAccount(privateKey).address)
  })

  it('refuses a key that is not a secp256k1 scalar (zero, the order, short)', () => {
    expect(() => signingKeyOf(new Uint8Array(32))).toThrow()
    expect(() => signingKeyOf(hexToBytes(toHex(N, { size: 32 })))).toThrow()
    expect(() => signingKeyOf(new Uint8Array(31).fill(1))).toThrow(/32 bytes/)
  })

  it('recovers the public point with the right bit, another point with the other, and nothing from a non-signature', async () => {
    const privateKey = generatePrivateKey()
    const publicKey = privateKeyToAccount(privateKey).publicKey
    const key = signingKeyOf(hexToBytes(privateKey))
    for (let i = 0; i < 16; i++) {
      const digest = randomBytes(32)
      const { rs, yParity } = await key.sign(digest)
      const right = await recoverPoint(digest, rs, yParity)
      expect(bytesToHex(right!)).toBe(publicKey)
      expect(await recoverPointNoble(digest, rs, yParity)).toEqual(right)
      const other = await recoverPoint(digest, rs, yParity === 1 ? 0 : 1)
      expect(other).not.toBeNull()
      expect(bytesToHex(other!)).not.toBe(publicKey)
      expect(await recoverPointNoble(digest, rs, yParity === 1 ? 0 : 1)).toEqual(other)
    }
    const digest = randomBytes(32)
    expect(await recoverPoint(digest, new Uint8Array(64), 0)).toBeNull()
    expect(await recoverPoint(digest, Uint8Array.from([...hexToBytes(toHex(N, { size: 32 })), ...new Uint8Array(31), 1]), 0)).toBeNull()
  })

  it('finds the recovery bit of a signature from the key’s point (both bits, a zero digest, a digest above the group order), and none for another key or digest', async () => {
    const privateKey = generatePrivateKey()
    const publicPoint = hexToBytes(privateKeyToAccount(privateKey).publicKey)
    const otherPoint = hexToBytes(privateKeyToAccount(generatePrivateKey()).publicKey)
    const key = signingKeyOf(hexToBytes(privateKey))
    const seen = new Set<number>()
    const digests = [new Uint8Array(32), new Uint8Array(32).fill(0xff), hexToBytes(toHex(N, { size: 32 })), ...Array.from({ length: 96 }, () => randomBytes(32))]
    for (const digest of digests) {
      const { rs, yParity } = await key.sign(digest)
      seen.add(yParity)
      expect(await recoveryBitOf(digest, rs, publicPoint)).toBe(yParity)
      expect(await recoveryBitOf(digest, rs, otherPoint)).toBeNull()
      const otherDigest = Uint8Array.from(digest, (byte, i) => (i === 31 ? byte ^ 1 : byte))
      expect(await recoveryBitOf(otherDigest, rs, publicPoint)).toBeNull()
    }
    expect([...seen].sort()).toEqual([0, 1])
    // No signature at all: r = 5 is no x coordinate on the curve.
    expect(await recoveryBitOf(randomBytes(32), Uint8Array.from([...hexToBytes(toHex(5n, { size: 32 })), ...new Uint8Array(31), 1]), publicPoint)).toBeNull()
  })

  it('falls back to viem’s noble, with the same signatures, under node --jitless (no WebAssembly)', async () => {
    // The compiled module: a child process cannot load TypeScript.
    const compiled = fileURLToPath(new URL('../../dist/signing/secp256k1.js', import.meta.url))
    const privateKey = generatePrivateKey()
    const digest = randomBytes(32)
    const script = `const m = await import(${JSON.stringify(compiled)})
      const key = m.signingKeyOf(Buffer.from('${privateKey.slice(2)}', 'hex'))
      const sig = await key.sign(Buffer.from('${digest.toString('hex')}', 'hex'))
      const point = await m.recoverPoint(Buffer.from('${digest.toString('hex')}', 'hex'), sig.rs, sig.yParity)
      const bit = await m.recoveryBitOf(Buffer.from('${digest.toString('hex')}', 'hex'), sig.rs, point)
      console.log(JSON.stringify([m.secp256k1Implementation, key.address, Buffer.from(sig.rs).toString('hex'), sig.yParity, Buffer.from(point).toString('hex'), bit]))`
    // stderr piped: node warns that --jitless turns WebAssembly off, which is the point.
    const out = execFileSync(process.execPath, ['--jitless', '--input-type=module', '-e', script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
    const account = privateKeyToAccount(privateKey)
    const ours = await signingKeyOf(hexToBytes(privateKey)).sign(digest)
    expect(JSON.parse(out)).toEqual(['noble', account.address, bytesToHex(ours.rs).slice(2), ours.yParity, account.publicKey.slice(2), ours.yParity])
  })
})
