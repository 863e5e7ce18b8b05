import { describe, expect, it } from 'vitest'
import { parseRequest } from './request.js'

const invalid = (id: unknown) => ({ ok: false, id, code: -32600 })

describe('parseRequest', () => {
  it('accepts requests with string, number or null ids, and notifications', () => {
    expect(parseRequest({ jsonrpc: '2.0', id: 7, method: 'm', params: { a: 1 } })).toEqual({
      ok: true,
      request: { id: 7, method: 'm', params: { a: 1 } },
    })
    expect(parseRequest({ jsonrpc: '2.0', id: 'x', method: 'm', params: [1] })).toMatchObject({ ok: true, request: { id: 'x' } })
    expect(parseRequest({ jsonrpc: '2.0', id: null, method: 'm' })).toMatchObject({ ok: true, request: { id: null, params: undefined } })
    expect(parseRequest({ jsonrpc: '2.0', method: 'm' })).toMatchObject({ ok: true, request: { id: undefined } })
  })

  it('refuses what is not an object, batches included', () => {
    for (const msg of [null, 1, 'x', true, [], [{ jsonrpc: '2.0', id: 1, method: 'm' }]]) {
      expect(parseRequest(msg)).toMatchObject(invalid(null))
    }
  })

  it('refuses bad ids with id null', () => {
    for (const id of [{}, [1], true, 1.5e400]) {
      expect(parseRequest({ jsonrpc: '2.0', id, method: 'm' })).toMatchObject(invalid(null))
    }
  })

  it('refuses a wrong or missing jsonrpc, a missing or non-string method, and scalar or null params, naming the id', () => {
    expect(parseRequest({ jsonrpc: '1.0', id: 1, method: 'm' })).toMatchObject(invalid(1))
    expect(parseRequest({ id: 2, method: 'm' })).toMatchObject(invalid(2))
    expect(parseRequest({ jsonrpc: '2.0', id: 3 })).toMatchObject(invalid(3))
    expect(parseRequest({ jsonrpc: '2.0', id: 4, method: 42 })).toMatchObject(invalid(4))
    for (const params of [5, 'x', true, null]) {
      expect(parseRequest({ jsonrpc: '2.0', id: 'p', method: 'm', params })).toMatchObject(invalid('p'))
    }
  })

  it('reads own properties only', () => {
    const inherited = Object.create({ jsonrpc: '2.0', id: 1, method: 'm' }) as object
    expect(parseRequest(inherited)).toMatchObject({ ok: false })
    const parsed = JSON.parse('{"jsonrpc":"2.0","id":1,"method":"m","__proto__":{"params":5}}') as unknown
    expect(parseRequest(parsed)).toEqual({ ok: true, request: { id: 1, method: 'm', params: undefined } })
  })
})
