import { describe, expect, it } from 'vitest'
import { hostnameOf } from './hostGuard.js'

describe('hostnameOf: RFC 3986 host[:port] or null', () => {
  it.each([
    ['127.0.0.1', '127.0.0.1'],
    ['127.0.0.1:3100', '127.0.0.1'],
    ['LOCALHOST:80', 'localhost'],
    ['[::1]', '[::1]'],
    ['[::1]:3100', '[::1]'],
    ['[::FFFF:127.0.0.1]:1', '[::ffff:127.0.0.1]'],
    ['my-host.example', 'my-host.example'],
  ])('%j -> %j', (header, host) => {
    expect(hostnameOf(header)).toBe(host)
  })

  it.each([
    undefined,
    '',
    '127.0.0.1:3100@evil.com',
    '[::1]evil.com',
    '[::1]:3100x',
    '[127.0.0.1]',
    '[v1.fe80::a]',
    'localhost:65536',
    'local host',
    'localhost/evil',
    'a..b:1:2',
    '-evil.com',
    'evil.com.',
    'évil.com',
  ])('%j is malformed', (header) => {
    expect(hostnameOf(header)).toBeNull()
  })
})
