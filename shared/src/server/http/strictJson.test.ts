import { gzipSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import Fastify from 'fastify'
import { installErrorHandling } from './errors.js'
import { installStrictJson } from './strictJson.js'

describe('installStrictJson', () => {
  async function app() {
    const a = Fastify({ onProtoPoisoning: 'error', onConstructorPoisoning: 'error' })
    installErrorHandling(a)
    installStrictJson(a)
    a.post('/echo', async (req) => ({ got: req.body }))
    return a
  }

  it('a key twice is 400 in the validation shape; what the default parser refuses is still refused the same way; other bodies parse as before', async () => {
    const a = await app()
    const post = (payload: string) => a.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' }, payload })
    const twice = await post('{"action":{"amount":"1","amount":"999"}}')
    expect(twice.statusCode).toBe(400)
    expect(twice.json()).toEqual({ statusCode: 400, error: 'Bad Request', message: 'body/action/amount is given twice in one object; send each member once' })
    expect((await post('{"a":')).json()).toMatchObject({ statusCode: 400, message: 'body is not valid JSON' })
    expect((await post('')).json()).toMatchObject({ statusCode: 400, message: 'body is empty; send a JSON object' })
    expect((await post('{"__proto__":{"x":1}}')).statusCode).toBe(400)
    expect((await post('{"a":[1,{"b":"c"}],"d":"{\\"a\\":1}"}')).json()).toEqual({ got: { a: [1, { b: 'c' }], d: '{"a":1}' } })
    const charset = await a.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json; charset=utf-8' }, payload: '{"a":1,"a":1}' })
    expect(charset.statusCode).toBe(400)
    await a.close()
  })

  it('a body with a Content-Encoding other than identity is 415 naming it, compressed or not (found by review: ignored, or "not valid JSON")', async () => {
    const a = await app()
    const post = (encoding: string, payload: string | Buffer) => a.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json', 'content-encoding': encoding }, payload })
    const plain = await post('gzip', '{"a":1}')
    expect(plain.statusCode).toBe(415)
    expect(plain.json()).toEqual({ statusCode: 415, error: 'Unsupported Media Type', message: 'content encoding "gzip" not supported; send the body uncompressed' })
    const zipped = await post('gzip', gzipSync('{"a":1}'))
    expect(zipped.statusCode).toBe(415)
    expect((await post('br', '{"a":1}')).statusCode).toBe(415)
    expect((await post('identity', '{"a":1}')).json()).toEqual({ got: { a: 1 } })
    await a.close()
  })

  it('a text/plain body is 415 like any other type that is not JSON (found by review: fastify parsed it to a string, a 400 "body must be object")', async () => {
    const a = await app()
    const post = (contentType: string, payload: string) => a.inject({ method: 'POST', url: '/echo', headers: { 'content-type': contentType }, payload })
    const form = await post('application/x-www-form-urlencoded', 'a=1')
    expect(form.statusCode).toBe(415)
    for (const type of ['text/plain', 'text/plain; charset=utf-8', 'TEXT/PLAIN']) {
      const res = await post(type, '{"a":1}')
      expect(res.statusCode, type).toBe(415)
      expect(res.json(), type).toEqual(form.json())
    }
    expect(form.json()).toEqual({ statusCode: 415, error: 'Unsupported Media Type', message: 'content type not supported; send application/json' })
    await a.close()
  })

  // Found by fuzzing: bad bytes became U+FFFD (200, and what was hashed and audited was not what was sent), and a
  // prototype member was "not valid JSON".
  it('bytes that are not UTF-8 are 400, a charset parameter changes nothing, a prototype member is named', async () => {
    const a = await app()
    const post = (payload: string | Buffer, contentType = 'application/json') => a.inject({ method: 'POST', url: '/echo', headers: { 'content-type': contentType }, payload })
    const bad = await post(Buffer.concat([Buffer.from('{"note":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]))
    expect(bad.statusCode).toBe(400)
    expect(bad.json()).toEqual({ statusCode: 400, error: 'Bad Request', message: 'body is not valid UTF-8; send JSON encoded in UTF-8' })
    // An overlong encoding of "/" and a lone surrogate are not UTF-8 either.
    expect((await post(Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc0, 0xaf, 0x22, 0x7d]))).statusCode).toBe(400)
    expect((await post(Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x7d]))).statusCode).toBe(400)
    expect((await post(Buffer.from('{"note":"h\u00e9 \u2603 é ☃"}'))).json()).toEqual({ got: { note: 'hé ☃ é ☃' } })
    expect((await post(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a":1}')]))).json()).toEqual({ got: { a: 1 } })

    // A charset parameter changes nothing (RFC 8259 §11): ASCII or UTF-8 under any label is read, UTF-16 is not UTF-8 JSON.
    for (const type of ['application/json; charset=UTF-8', 'application/json;charset="utf-8"', 'application/json; charset=us-ascii', 'application/json; charset=']) {
      expect((await post('{"a":1}', type)).json(), type).toEqual({ got: { a: 1 } })
    }
    expect((await post(Buffer.from('{"a":1}', 'utf16le'), 'application/json; charset=utf-16')).statusCode).toBe(400)

    for (const body of ['{"__proto__":{"x":1}}', '{"a":{"constructor":{"prototype":{"x":1}}}}', '\ufeff{"__proto__":{"x":1}}']) {
      const res = await post(body)
      expect(res.statusCode, body).toBe(400)
      expect(res.json().message, body).toMatch(/^body has a member named "__proto__", or a "constructor" holding "prototype", which is refused/)
    }
    expect((await post('{"a":')).json().message).toBe('body is not valid JSON')
    await a.close()
  })
})
