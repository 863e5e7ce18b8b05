import { describe, expect, it } from 'vitest'
import { sameOrigin } from './sameOrigin.js'

describe('sameOrigin', () => {
  it('accepts a page served by the same host and port, and a client that sends no Origin', () => {
    expect(sameOrigin('http://127.0.0.1:3100', '127.0.0.1:3100')).toBe(true)
    expect(sameOrigin('http://localhost:3100', 'LOCALHOST:3100')).toBe(true)
    expect(sameOrigin('http://[::1]:3100', '[::1]:3100')).toBe(true)
    expect(sameOrigin(undefined, '127.0.0.1:3100')).toBe(true)
  })

  it('refuses another site, another port, another scheme, an opaque origin and garbage', () => {
    expect(sameOrigin('http://evil.example', '127.0.0.1:3100')).toBe(false)
    expect(sameOrigin('http://127.0.0.1:8080', '127.0.0.1:3100')).toBe(false)
    expect(sameOrigin('http://localhost:3100', '127.0.0.1:3100')).toBe(false)
    expect(sameOrigin('null', '127.0.0.1:3100')).toBe(false)
    expect(sameOrigin('file:///home/someone/x.html', '127.0.0.1:3100')).toBe(false)
    expect(sameOrigin('chrome-extension://abc', '127.0.0.1:3100')).toBe(false)
    expect(sameOrigin('not a url', '127.0.0.1:3100')).toBe(false)
    expect(sameOrigin('http://127.0.0.1:3100', undefined)).toBe(false)
  })
})
