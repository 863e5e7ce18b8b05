import { describe, expect, it } from 'vitest'
import { RPC_INTERNAL_ERROR, RPC_INVALID_PARAMS, RPC_INVALID_REQUEST, RPC_METHOD_NOT_FOUND, RPC_PARSE_ERROR } from '../rpc/errors.js'
import { APPLICATION_ERROR_CODES } from './errorCodes.js'

describe('RPC error codes', () => {
  it('application codes are distinct, in the range JSON-RPC 2.0 leaves to servers, and apart from the standard ones', () => {
    const app = Object.values(APPLICATION_ERROR_CODES)
    expect(new Set(app).size).toBe(app.length)
    for (const code of app) expect(code >= -32099 && code <= -32000, String(code)).toBe(true)
    expect([RPC_PARSE_ERROR, RPC_INVALID_REQUEST, RPC_METHOD_NOT_FOUND, RPC_INVALID_PARAMS, RPC_INTERNAL_ERROR]).toEqual([-32700, -32600, -32601, -32602, -32603])
  })
})
