import { describe, expect, it } from 'vitest'
import { dispatch, type RpcMethods } from './dispatch.js'
import { RpcError } from './errors.js'

const methods: RpcMethods = {
  echo: (p) => p,
  asyncEcho: async (p) => p,
  refuse: () => {
    throw new RpcError(-32010, 'denied', { reason: 'x' })
  },
  crash: () => {
    throw new Error('secret detail at /srv/keys')
  },
  reject: () => Promise.reject(new TypeError('secret')),
  badCode: () => {
    throw new RpcError(Number.NaN, 'weird')
  },
}

const ctx = { signal: new AbortController().signal }
const run = (msg: unknown, sink: (err: unknown, method: string) => void = () => {}) => dispatch(msg, methods, ctx, sink)

describe('dispatch', () => {
  it('answers a request with its result under its id; params default to {}', async () => {
    expect(await run({ jsonrpc: '2.0', id: 'a', method: 'echo', params: [1] })).toEqual({ jsonrpc: '2.0', id: 'a', result: [1] })
    expect(await run({ jsonrpc: '2.0', id: 1, method: 'asyncEcho' })).toEqual({ jsonrpc: '2.0', id: 1, result: {} })
  })

  it('answers nothing to notifications, whatever happens', async () => {
    for (const method of ['echo', 'refuse', 'crash', 'missing']) {
      expect(await run({ jsonrpc: '2.0', method, params: {} })).toBeNull()
    }
  })

  it('answers invalid requests', async () => {
    expect(await run([1])).toMatchObject({ id: null, error: { code: -32600 } })
    expect(await run({ jsonrpc: '2.0', id: 9, method: 'echo', params: 1 })).toMatchObject({ id: 9, error: { code: -32600 } })
  })

  it('finds own methods only', async () => {
    for (const method of ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'missing']) {
      expect(await run({ jsonrpc: '2.0', id: 1, method })).toEqual({
        jsonrpc: '2.0',
        id: 1,
        error: { code: -32601, message: `method not found: ${method}` },
      })
    }
  })

  it('passes an RpcError through with its data', async () => {
    expect(await run({ jsonrpc: '2.0', id: 1, method: 'refuse' })).toEqual({
      jsonrpc: '2.0',
      id: 1,
      error: { code: -32010, message: 'denied', data: { reason: 'x' } },
    })
  })

  it('answers other failures with a generic internal error and reports them, even when the reporter throws', async () => {
    for (const method of ['crash', 'reject', 'badCode']) {
      const seen: Array<[unknown, string]> = []
      const response = await run({ jsonrpc: '2.0', id: 1, method }, (err, m) => seen.push([err, m]))
      expect(response).toEqual({ jsonrpc: '2.0', id: 1, error: { code: -32603, message: 'internal error' } })
      expect(JSON.stringify(response)).not.toContain('secret')
      expect(seen).toEqual([[expect.any(Error), method]])
    }
    const throwingSink = () => {
      throw new Error('logger down')
    }
    expect(await run({ jsonrpc: '2.0', id: 2, method: 'crash' }, throwingSink)).toMatchObject({ error: { code: -32603 } })
  })
})
