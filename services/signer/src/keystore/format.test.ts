import { describe, expect, it } from 'vitest'
import { keyFileName, keyFileProblem, labelProblem, parseKeyFile, scryptParamsProblem, serializeKeyFile, type KeyFile } from './format.js'
import { ADDR_A } from './testkeys.testkit.js'

const valid: KeyFile = {
  version: 1,
  address: ADDR_A,
  kdf: { name: 'scrypt', N: 2 ** 17, r: 8, p: 1, salt: 'ab'.repeat(32), dkLen: 32 },
  cipher: { name: 'aes-256-gcm', nonce: 'cd'.repeat(12), ciphertext: 'ef'.repeat(48) },
  createdAt: '2026-01-02T03:04:05.678Z',
  label: 'treasury',
  dev: false,
}
const withKdf = (kdf: Partial<KeyFile['kdf']>) => ({ ...valid, kdf: { ...valid.kdf, ...kdf } })
const withCipher = (cipher: Partial<KeyFile['cipher']>) => ({ ...valid, cipher: { ...valid.cipher, ...cipher } })

describe('key file format', () => {
  it('accepts a valid file and round-trips it through its text', () => {
    expect(keyFileProblem(valid)).toBeNull()
    expect(parseKeyFile(serializeKeyFile(valid))).toEqual({ ok: true, keyFile: valid })
    const { label: _l, dev: _d, ...minimal } = valid
    expect(keyFileProblem(minimal)).toBeNull()
  })

  it('names files by lowercase address', () => {
    expect(keyFileName(ADDR_A)).toBe('0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266.json')
  })

  it.each([
    ['not JSON', '{"version": 1', /not valid JSON/],
    ['an array', '[]', /not a JSON object/],
    ['version 3', JSON.stringify({ ...valid, version: 3 }), /version 3 is not supported \(expected 2, or 1 to reseal\)/],
    ['an unknown field', JSON.stringify({ ...valid, privateKey: 'x' }), /unknown field\(s\) privateKey/],
    ['a missing field', JSON.stringify({ ...valid, cipher: undefined }), /lacks cipher/],
    ['an unchecksummed address', JSON.stringify({ ...valid, address: ADDR_A.toLowerCase() }), /not EIP-55 checksummed/],
    ['a short address', JSON.stringify({ ...valid, address: '0x1234' }), /not a 0x-address/],
    ['another kdf', JSON.stringify(withKdf({ name: 'pbkdf2' as 'scrypt' })), /kdf.name "pbkdf2" is not supported/],
    ['N below 2^14', JSON.stringify(withKdf({ N: 2 ** 13 })), /unsafe or absurd scrypt parameters: N = 8192/],
    ['N not a power of two', JSON.stringify(withKdf({ N: 100_000 })), /power of two/],
    ['N absurdly large', JSON.stringify(withKdf({ N: 2 ** 30 })), /power of two from 2\^14 to 2\^20/],
    ['r = 0', JSON.stringify(withKdf({ r: 0 })), /r = 0/],
    ['p huge', JSON.stringify(withKdf({ p: 1e9 })), /p = 1000000000/],
    ['N as a string', JSON.stringify(withKdf({ N: '131072' as unknown as number })), /must be numbers/],
    ['a short salt', JSON.stringify(withKdf({ salt: 'ab'.repeat(16) })), /kdf.salt must be 32 bytes/],
    ['uppercase salt hex', JSON.stringify(withKdf({ salt: 'AB'.repeat(32) })), /kdf.salt/],
    ['dkLen 64', JSON.stringify(withKdf({ dkLen: 64 as 32 })), /dkLen must be 32/],
    ['another cipher', JSON.stringify(withCipher({ name: 'aes-128-ctr' as 'aes-256-gcm' })), /cipher.name "aes-128-ctr"/],
    ['a 16-byte nonce', JSON.stringify(withCipher({ nonce: 'cd'.repeat(16) })), /cipher.nonce must be 12 bytes/],
    ['a ciphertext without tag', JSON.stringify(withCipher({ ciphertext: 'ef'.repeat(32) })), /cipher.ciphertext must be 48 bytes/],
    ['a bad date', JSON.stringify({ ...valid, createdAt: 'yesterday' }), /createdAt/],
    ['a label with an escape sequence', JSON.stringify({ ...valid, label: 'a\u001b[2Jb' }), /label may not contain control characters/],
    ['dev as a string', JSON.stringify({ ...valid, dev: 'yes' }), /dev is not a boolean/],
  ])('refuses %s', (_what, text, problem) => {
    const result = parseKeyFile(text)
    expect(result.ok).toBe(false)
    if (!result.ok) expect(result.problem).toMatch(problem)
  })

  it('bounds scrypt parameters: at least 2^14, at most 1 GiB of memory and 2^24 work', () => {
    expect(scryptParamsProblem({ N: 2 ** 14, r: 8, p: 1 })).toBeNull()
    expect(scryptParamsProblem({ N: 2 ** 17, r: 8, p: 1 })).toBeNull()
    expect(scryptParamsProblem({ N: 2 ** 20, r: 8, p: 1 })).toBeNull()
    expect(scryptParamsProblem({ N: 2 ** 20, r: 16, p: 1 })).toMatch(/1 GiB/)
    expect(scryptParamsProblem({ N: 2 ** 20, r: 8, p: 4 })).toMatch(/too slow/)
    expect(scryptParamsProblem({ N: 2 ** 17, r: 1.5, p: 1 })).toMatch(/r = 1.5/)
  })

  it('checks labels', () => {
    expect(labelProblem('hot wallet #2 – ops')).toBeNull()
    expect(labelProblem('')).toMatch(/empty/)
    expect(labelProblem('x'.repeat(129))).toMatch(/at most 128/)
    expect(labelProblem('a\nb')).toMatch(/control/)
    expect(labelProblem('pay\u202Eoops')).toMatch(/control/) // right-to-left override
  })
})
