import { describe, expect, it } from 'vitest'
import { parseIndex, parseOptions, secretInArgv, UsageError } from './args.js'

const KEY = '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a'
const MNEMONIC = 'test test test test test test test test test test test junk'

describe('secretInArgv', () => {
  it('spots a private key anywhere in an argument, with or without 0x', () => {
    expect(secretInArgv(['import', KEY])).toMatch(/private key/)
    expect(secretInArgv(['import', KEY.slice(2)])).toMatch(/private key/)
    expect(secretInArgv(['import', `--label=${KEY}`])).toMatch(/private key/)
    expect(secretInArgv([KEY])).toMatch(/private key/)
  })

  it('spots a mnemonic, quoted or not', () => {
    expect(secretInArgv(['import-mnemonic', '--label', MNEMONIC])).toMatch(/mnemonic/)
    expect(secretInArgv(['import-mnemonic', ...MNEMONIC.split(' ')])).toMatch(/mnemonic/)
  })

  it('lets ordinary arguments through, and never quotes the argument', () => {
    expect(secretInArgv(['import-mnemonic', '--account', '3', '--index', '7', '--label', 'cold storage', '--data-dir', '/var/lib/cs'])).toBeNull()
    expect(secretInArgv(['list', '--data-dir', '/var/lib/countersign-0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266'])).toBeNull() // an address is not a key
    expect(secretInArgv(['import', KEY])).not.toContain(KEY.slice(4, 20))
  })
})

describe('parseOptions', () => {
  it('reads --name value and --name=value', () => {
    expect(parseOptions(['--label', 'a b', '--data-dir=/x'], ['label', 'data-dir'])).toEqual({ label: 'a b', 'data-dir': '/x' })
    expect(parseOptions(['--label='], ['label'])).toEqual({ label: '' })
  })

  it('refuses unknown, repeated, valueless options and positional arguments', () => {
    expect(() => parseOptions(['--lable', 'x'], ['label'])).toThrow('unknown option --lable (this command takes --label)')
    expect(() => parseOptions(['--label', 'a', '--label', 'b'], ['label'])).toThrow('--label is given twice')
    expect(() => parseOptions(['--label'], ['label'])).toThrow('--label needs a value')
    expect(() => parseOptions(['stray'], ['label'])).toThrow(UsageError)
  })

  it('takes a flag without a value, and refuses one given a value or twice', () => {
    expect(parseOptions(['--yes', '--data-dir', '/x'], ['data-dir', 'yes'], ['yes'])).toEqual({ yes: '', 'data-dir': '/x' })
    expect(parseOptions(['--data-dir', '/x'], ['data-dir', 'yes'], ['yes'])).toEqual({ 'data-dir': '/x' })
    expect(() => parseOptions(['--yes=no'], ['yes'], ['yes'])).toThrow('--yes takes no value')
    expect(() => parseOptions(['--yes', '--yes'], ['yes'], ['yes'])).toThrow('--yes is given twice')
  })
})

describe('parseIndex', () => {
  it('accepts 0 to 2^31 - 1, default 0', () => {
    expect(parseIndex(undefined, '--index')).toBe(0)
    expect(parseIndex('0', '--index')).toBe(0)
    expect(parseIndex('2147483647', '--index')).toBe(2 ** 31 - 1)
    for (const bad of ['-1', '1.5', '2147483648', '01', '', 'x']) expect(() => parseIndex(bad, '--index')).toThrow(/--index must be an integer/)
  })
})
