import { describe, expect, it } from 'vitest'
import { RpcError } from './errors.js'
import { encodeResponse, errorResponse, readResponse, resultResponse } from './response.js'

describe('encodeResponse', () => {
  it('encodes a result, undefined as null', () => {
    expect(encodeResponse(resultResponse(1, { a: 1 }))).toBe('{"jsonrpc":"2.0","id":1,"result":{"a":1}}\n')
    expect(encodeResponse(resultResponse('x', undefined))).toBe('{"jsonrpc":"2.0","id":"x","result":null}\n')
  })

  it('turns a result JSON cannot carry into an internal error, and says why', () => {
    const why: unknown[] = []
    const line = encodeResponse(resultResponse(2, { n: 1n }), (err) => why.push(err))
    expect(JSON.parse(line)).toEqual({ jsonrpc: '2.0', id: 2, error: { code: -32603, message: 'internal error' } })
    expect(why).toHaveLength(1)
  })

  it('drops error data JSON cannot carry and keeps code and message', () => {
    const cyclic: Record<string, unknown> = {}
    cyclic.self = cyclic
    const line = encodeResponse(errorResponse(3, -32010, 'denied', cyclic))
    expect(JSON.parse(line)).toEqual({ jsonrpc: '2.0', id: 3, error: { code: -32010, message: 'denied' } })
  })
})

describe('readResponse', () => {
  it('reads results and errors for numeric ids', () => {
    expect(readResponse({ jsonrpc: '2.0', id: 1, result: null })).toEqual({ id: 1, ok: true, result: null })
    const r = readResponse({ jsonrpc: '2.0', id: 2, error: { code: -32602, message: 'bad', data: { f: 'x' } } })
    expect(r).toMatchObject({ id: 2, ok: false })
    const err = (r as { error: RpcError }).error
    expect(err).toBeInstanceOf(RpcError)
    expect(err).toMatchObject({ code: -32602, message: 'bad', data: { f: 'x' } })
  })

  it('ignores what cannot answer one of our calls', () => {
    for (const msg of [null, 'x', [], { id: null, error: { code: -32700, message: 'parse error' } }, { id: 'a', result: 1 }]) {
      expect(readResponse(msg)).toBeNull()
    }
  })

  it('turns a malformed error or a response with neither result nor error into an RpcError', () => {
    for (const msg of [{ id: 1, error: 'boom' }, { id: 1, error: { code: 'x', message: 'm' } }, { id: 1, error: { code: 1 } }, { id: 1 }]) {
      const r = readResponse(msg)
      expect(r).toMatchObject({ id: 1, ok: false })
      expect((r as { error: RpcError }).error).toMatchObject({ code: -32603 })
    }
  })
})
