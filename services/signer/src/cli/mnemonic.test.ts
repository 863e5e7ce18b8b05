import { describe, expect, it } from 'vitest'
import { derivationPath, deriveFromMnemonic, mnemonicProblem, normalizeMnemonic } from './mnemonic.js'

const MNEMONIC = 'test test test test test test test test test test test junk'

describe('mnemonics', () => {
  it('derives the well-known anvil accounts at m/44\'/60\'/0\'/0/i', () => {
    const first = deriveFromMnemonic(MNEMONIC, 0, 0)
    expect(first.address).toBe('0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266')
    expect(Buffer.from(first.privateKey).toString('hex')).toBe('ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80')
    first.wipe()
    expect(first.privateKey.every((b) => b === 0)).toBe(true)
    expect(deriveFromMnemonic(MNEMONIC, 0, 1).address).toBe('0x70997970C51812dc3A010C7d01b50e0d17dc79C8')
    expect(deriveFromMnemonic(MNEMONIC, 1, 0).address).not.toBe(first.address)
    expect(derivationPath(2, 5)).toBe("m/44'/60'/2'/0/5")
  })

  it('validates word count, word list and checksum', () => {
    expect(mnemonicProblem(MNEMONIC)).toBeNull()
    expect(mnemonicProblem('abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about')).toBeNull()
    expect(mnemonicProblem(`${'abandon '.repeat(23)}art`)).toBeNull()
    expect(mnemonicProblem('test test test test test test test test test test test test')).toMatch(/checksum does not match/)
    expect(mnemonicProblem('test test test test test test test test test test test junk junk')).toMatch(/not 13/)
    expect(mnemonicProblem('test test test test test test test test test test tset junk')).toBe('word 11 is not in the English BIP-39 word list')
  })

  it('normalises case and whitespace', () => {
    expect(normalizeMnemonic('  Test test\ttest\n test test test test test test test test JUNK\n')).toBe(MNEMONIC)
  })
})
