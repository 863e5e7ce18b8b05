import { describe, expect, it } from 'vitest'
import { hexToBytes, keccak256, parseEther, recoverAddress, recoverTransactionAddress, type TransactionSerializableEIP1559 } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { keystoreRingKey } from '../keystore/keystoreBackend.js'
import { signTransactionWith, type RingKey } from './keyBackend.js'
import { keyRingOf, KeyRingError } from './keyRing.js'
import { signingKeyOf } from './secp256k1.js'

const tx: TransactionSerializableEIP1559 = {
  type: 'eip1559',
  chainId: 31337,
  nonce: 7,
  to: '0x00000000000000000000000000000000000000aa',
  value: parseEther('0.5'),
  data: '0x',
  gas: 21000n,
  maxFeePerGas: 2_000_000_000n,
  maxPriorityFeePerGas: 1_000_000_000n,
}

function freshKey() {
  const privateKey = generatePrivateKey()
  return { account: privateKeyToAccount(privateKey), signingKey: signingKeyOf(hexToBytes(privateKey)) }
}

describe('key backends', () => {
  it('a keystore key signs a transaction through signDigest exactly as viem signs it with the private key', async () => {
    const { account, signingKey } = freshKey()
    const key = keystoreRingKey({ address: account.address, signingKey, label: 'k', dev: false })
    const { signedTx: signed, txHash } = await signTransactionWith(key, tx)
    expect(signed).toBe(await account.signTransaction(tx))
    expect(txHash).toBe(keccak256(signed))
    expect(await recoverTransactionAddress({ serializedTransaction: signed as `0x02${string}` })).toBe(account.address)
  })

  it('signDigest gives a low s and the recovery bit of the key', async () => {
    const { account, signingKey } = freshKey()
    const key = keystoreRingKey({ address: account.address, signingKey, label: null, dev: false })
    const digest = keccak256('0x1234')
    const sig = await key.signDigest(digest)
    expect(BigInt(sig.s) <= 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n).toBe(true)
    expect(await recoverAddress({ hash: digest, signature: sig })).toBe(account.address)
  })

  it('refuses one address in two backends', () => {
    const { account, signingKey } = freshKey()
    const a = keystoreRingKey({ address: account.address, signingKey, label: null, dev: false })
    const b: RingKey = { ...a, address: account.address.toLowerCase(), backend: 'pkcs11' }
    expect(() => keyRingOf([a, b])).toThrow(KeyRingError)
    expect(() => keyRingOf([a, b])).toThrow(/both the keystore and the pkcs11 backend/)
    expect(keyRingOf([a]).get(account.address.toLowerCase())?.backend).toBe('keystore')
  })
})
