import { createHmac } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { signatureHeader, verifySignature } from './signature.js'

describe('webhook signature', () => {
  const body = '{"id":"e1","type":"approval_requested"}'

  it('is the hex HMAC-SHA256 of "t.body" with the secret', () => {
    const expected = createHmac('sha256', 'shh').update(`1700000000.${body}`).digest('hex')
    expect(signatureHeader('shh', 1700000000, body)).toBe(`t=1700000000,v1=${expected}`)
  })

  it('verifies within the replay window and refuses outside it, another body or another secret', () => {
    const h = signatureHeader('shh', 1700000000, body)
    expect(verifySignature('shh', h, body, 1700000000 + 299)).toBe(true)
    expect(verifySignature('shh', h, body, 1700000000 + 301)).toBe(false)
    expect(verifySignature('shh', h, body + ' ', 1700000000)).toBe(false)
    expect(verifySignature('other', h, body, 1700000000)).toBe(false)
    expect(verifySignature('shh', undefined, body, 1700000000)).toBe(false)
    expect(verifySignature('shh', 't=1700000000,v1=zz', body, 1700000000)).toBe(false)
  })
})
