import { sha256 } from '@noble/hashes/sha2.js'
import { english, mnemonicToAccount } from 'viem/accounts'

const INDEX = new Map(english.map((w, i) => [w, i]))

/** Lowercase, NFKD, single spaces. */
export const normalizeMnemonic = (text: string): string => text.normalize('NFKD').trim().toLowerCase().split(/\s+/).join(' ')

/**
 * Why this is not a valid English BIP-39 mnemonic, or null: 12 to 24 words
 * (a multiple of 3), every word in the list, and the checksum bits (the first
 * words/3 bits of sha256(entropy)) matching. viem derives from any phrase, so
 * a typo would otherwise import a different, unfunded key.
 */
export function mnemonicProblem(mnemonic: string): string | null {
  const words = mnemonic.split(' ')
  if (![12, 15, 18, 21, 24].includes(words.length)) return `a mnemonic has 12, 15, 18, 21 or 24 words, not ${words.length}`
  const unknown = words.findIndex((w) => !INDEX.has(w))
  if (unknown !== -1) return `word ${unknown + 1} is not in the English BIP-39 word list`
  const bits = words.map((w) => INDEX.get(w)!.toString(2).padStart(11, '0')).join('')
  const checksumBits = words.length / 3
  const entropyBits = bits.length - checksumBits
  const entropy = new Uint8Array(entropyBits / 8)
  for (let i = 0; i < entropy.length; i++) entropy[i] = parseInt(bits.slice(i * 8, i * 8 + 8), 2)
  const expected = sha256(entropy)[0]!.toString(2).padStart(8, '0').slice(0, checksumBits)
  entropy.fill(0)
  return bits.slice(entropyBits) === expected ? null : 'the checksum does not match (a word is wrong or out of order)'
}

export const derivationPath = (account: number, index: number): string => `m/44'/60'/${account}'/0/${index}`

/**
 * The key at m/44'/60'/account'/0/index. `wipe()` zeroes the derived node's
 * private key bytes (the returned `privateKey` is that buffer).
 */
export function deriveFromMnemonic(mnemonic: string, account: number, index: number): { privateKey: Uint8Array; address: string; wipe: () => void } {
  const hd = mnemonicToAccount(mnemonic, { accountIndex: account, addressIndex: index })
  const node = hd.getHdKey()
  if (!node.privateKey) throw new Error('the derivation yielded no private key')
  return { privateKey: node.privateKey, address: hd.address, wipe: () => void node.wipePrivateData() }
}
