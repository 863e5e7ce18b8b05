import { randomBytes } from 'node:crypto'
import { checksumAddress, type Address } from 'viem'
import { describe, expect, it } from 'vitest'
import { actions, makeIntent } from '../server/testing/intents.js'
import type { TxIntent } from '../types.js'
import { assertIntentChecksums, hasValidChecksum, intentAddresses, normalizeIntentAddresses, toChecksumAddress } from './addresses.js'
import { buildTransaction } from './buildTransaction.js'
import { BuildError } from './errors.js'
import { defaultRouterTable } from './routers.js'

// The four examples of EIP-55 itself.
const EIP55_EXAMPLES = [
  '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
  '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359',
  '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB',
  '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb',
]

/** The same address with the case of its first letter flipped: a one-character typo of case. */
function flipFirstLetter(address: string): string {
  const i = address.slice(2).search(/[a-fA-F]/) + 2
  const c = address[i]!
  return address.slice(0, i) + (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()) + address.slice(i + 1)
}

describe('hasValidChecksum', () => {
  it('accepts the EIP-55 examples and refuses each with one letter in the wrong case', () => {
    for (const a of EIP55_EXAMPLES) {
      expect(hasValidChecksum(a), a).toBe(true)
      expect(hasValidChecksum(flipFirstLetter(a)), a).toBe(false)
    }
  })

  it('accepts addresses without a checksum: all lower case, all upper case, no letters', () => {
    expect(hasValidChecksum(EIP55_EXAMPLES[0]!.toLowerCase())).toBe(true)
    expect(hasValidChecksum(`0x${EIP55_EXAMPLES[0]!.slice(2).toUpperCase()}`)).toBe(true)
    expect(hasValidChecksum('0x2222222222222222222222222222222222222222')).toBe(true)
  })

  it('still refuses a near miss of an address it has already verified (verified ones are remembered)', () => {
    for (let n = 0; n < 3; n++) {
      expect(hasValidChecksum(EIP55_EXAMPLES[1]!)).toBe(true)
      expect(hasValidChecksum(flipFirstLetter(EIP55_EXAMPLES[1]!))).toBe(false)
    }
    // Far more distinct addresses than are kept: answers stay right while the memo empties itself.
    for (let n = 0; n < 5000; n++) expect(hasValidChecksum(checksumAddress(`0x${randomBytes(20).toString('hex')}` as Address))).toBe(true)
    expect(hasValidChecksum(flipFirstLetter(EIP55_EXAMPLES[1]!))).toBe(false)
  })

  it('agrees with viem on random addresses', () => {
    for (let n = 0; n < 300; n++) {
      const checksummed = checksumAddress(`0x${randomBytes(20).toString('hex')}` as Address)
      expect(hasValidChecksum(checksummed)).toBe(true)
      // A flip that leaves the address in one case only (its one upper-case
      // letter made lower) is a valid unchecksummed address, not a near miss.
      const flipped = flipFirstLetter(checksummed).slice(2)
      if (/[a-f]/.test(flipped) && /[A-F]/.test(flipped)) {
        expect(hasValidChecksum(`0x${flipped}`), checksummed).toBe(false)
      }
    }
  })
})

describe('assertIntentChecksums', () => {
  const BAD = '0x2222222222222222222222222222222222222aBc' as Address

  it('lists every address of every action', () => {
    expect(intentAddresses(makeIntent({ action: actions.transfer('1') })).map(([f]) => f)).toEqual(['wallet.address', 'action.asset.address', 'action.to'])
    expect(intentAddresses(makeIntent({ action: actions.native('1') })).map(([f]) => f)).toEqual(['wallet.address', 'action.to'])
    expect(intentAddresses(makeIntent({ action: actions.approve('1') })).map(([f]) => f)).toEqual(['wallet.address', 'action.asset.address', 'action.spender'])
    for (const swap of [actions.swapIn(), actions.swapOut()]) {
      expect(intentAddresses(makeIntent({ action: swap })).map(([f]) => f)).toEqual(['wallet.address', 'action.router', 'action.assetIn.address', 'action.assetOut.address'])
    }
  })

  it.each([
    ['wallet.address', (i: TxIntent) => ({ ...i, wallet: { address: BAD } })],
    ['action.to', (i: TxIntent) => ({ ...i, action: { ...actions.transfer('1'), to: BAD } })],
    ['action.asset.address', (i: TxIntent) => ({ ...i, action: { ...actions.approve('1'), asset: { ...actions.approve('1').asset, address: BAD } } })],
    ['action.spender', (i: TxIntent) => ({ ...i, action: { ...actions.approve('1'), spender: BAD } })],
    ['action.assetOut.address', (i: TxIntent) => ({ ...i, action: { ...actions.swapIn(), assetOut: { kind: 'erc20', address: BAD } } })],
  ] as const)('refuses a wrong checksum in %s with a BuildError naming the field, before anything is built', (field, change) => {
    const intent = change(makeIntent({})) as TxIntent
    const attempt = () => buildTransaction(intent, defaultRouterTable())
    expect(attempt).toThrow(BuildError)
    expect(attempt).toThrow(`${field} ${BAD} is mixed case but fails its EIP-55 checksum`)
  })

  it('lets the same intents through with the addresses in lower case', () => {
    const intent = makeIntent({ action: { ...actions.transfer('1'), to: BAD.toLowerCase() as Address } })
    expect(() => assertIntentChecksums(intent)).not.toThrow()
  })
})

describe('toChecksumAddress and normalizeIntentAddresses', () => {
  it('give viem’s EIP-55 form from any case', () => {
    for (let n = 0; n < 200; n++) {
      const lower = `0x${randomBytes(20).toString('hex')}`
      const expected = checksumAddress(lower as Address)
      expect(toChecksumAddress(lower)).toBe(expected)
      expect(toChecksumAddress(`0x${lower.slice(2).toUpperCase()}`)).toBe(expected)
      expect(toChecksumAddress(expected)).toBe(expected)
    }
  })

  const upper = (a: string) => `0x${a.slice(2).toUpperCase()}` as Address
  const allUpper = (i: TxIntent): TxIntent => JSON.parse(JSON.stringify(i).replace(/0x[0-9a-fA-F]{40}/g, (a) => upper(a)))

  it.each(Object.keys(actions) as Array<keyof typeof actions>)('put every address of a %s intent in EIP-55 form and change nothing else', (name) => {
    const given = allUpper(makeIntent({ action: actions[name]() }))
    const copy = structuredClone(given)
    const normal = normalizeIntentAddresses(given)
    expect(given).toEqual(copy) // the input is not changed
    for (const [field, address] of intentAddresses(normal)) expect(address, field).toBe(checksumAddress(address))
    // Lower-cased, the two intents are the same.
    const lowered = (i: TxIntent) => JSON.stringify(i).toLowerCase()
    expect(lowered(normal)).toBe(lowered(given))
    expect(Object.keys(normal)).toEqual(Object.keys(given))
  })

  it('return an intent whose addresses are lower case or checksummed as it is', () => {
    for (const make of Object.values(actions)) {
      const intent = makeIntent({ action: make() })
      expect(normalizeIntentAddresses(intent)).toBe(intent)
      const lower = JSON.parse(JSON.stringify(intent).replace(/0x[0-9a-fA-F]{40}/g, (a) => a.toLowerCase())) as TxIntent
      expect(normalizeIntentAddresses(lower)).toBe(lower)
    }
  })

  it('refuse a wrong checksum before normalising', () => {
    const intent = makeIntent({ action: { ...actions.transfer('1'), to: '0x2222222222222222222222222222222222222aBc' as Address } })
    expect(() => normalizeIntentAddresses(intent)).toThrow(BuildError)
  })

  it('keep a swap buildable that had its addresses in upper case (viem refuses that case)', () => {
    const given = allUpper(makeIntent({ action: actions.swapIn() }))
    const built = buildTransaction(normalizeIntentAddresses(given), defaultRouterTable())
    expect(built.txRequest.to).toBe(checksumAddress(built.txRequest.to))
  })
})
