import { randomUUID } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { getAddress } from 'viem'
import { afterEach, describe, expect, it } from 'vitest'
import { actions, makeIntent, RECIPIENT, WALLET } from '@countersign/shared/testing/intents'
import { insertRawAuditRow } from '@countersign/shared/testing/auditTamper'
import { makeTestGateway } from './app.testkit.js'

type Gw = Awaited<ReturnType<typeof makeTestGateway>>
let gw: Gw
afterEach(async () => {
  await gw?.close()
})

const post = (g: Gw, url: string, payload: unknown, headers: Record<string, string> = {}) =>
  g.app.inject({ method: 'POST', url, payload: payload as object, headers })

function expectValidationShape(res: { statusCode: number; json(): unknown; headers: Record<string, unknown> }) {
  expect(res.statusCode).toBe(400)
  const body = res.json() as Record<string, unknown>
  expect(Object.keys(body).sort()).toEqual(['error', 'message', 'statusCode'])
  expect(body.statusCode).toBe(400)
  expect(body.error).toBe('Bad Request')
  expect(typeof body.message).toBe('string')
  expect(res.headers['x-service-version']).toBe('0.1.0')
  return body.message as string
}

describe('GET /v1/health', () => {
  it('answers status, version and uptime and nothing else', async () => {
    gw = await makeTestGateway()
    gw.clock.advance(2500)
    const res = await gw.app.inject({ method: 'GET', url: '/v1/health' })
    expect(res.statusCode).toBe(200)
    expect(res.headers['x-service-version']).toBe('0.1.0')
    expect(res.json()).toEqual({ status: 'ok', version: '0.1.0', uptime: 2.5 })
  })
})

describe('service-wide behaviour', () => {
  it('unknown routes are a 404 in the simple error shape with the version header', async () => {
    gw = await makeTestGateway()
    const res = await gw.app.inject({ method: 'GET', url: '/v1/nope?x=1' })
    expect(res.statusCode).toBe(404)
    expect(res.headers['x-service-version']).toBe('0.1.0')
    expect(res.json()).toEqual({ error: 'not_found', message: 'route GET /v1/nope does not exist' })
  })

  it('refuses a foreign Host header (DNS rebinding) and accepts loopback names', async () => {
    gw = await makeTestGateway()
    const bad = await gw.app.inject({ method: 'GET', url: '/v1/health', headers: { host: 'evil.example:3100' } })
    expect(bad.statusCode).toBe(403)
    expect(bad.json()).toMatchObject({ error: 'host_not_allowed' })
    expect(bad.headers['x-service-version']).toBe('0.1.0')
    for (const host of ['localhost:3100', '127.0.0.1:3100', '127.0.0.1', '[::1]:3100', 'LOCALHOST']) {
      const ok = await gw.app.inject({ method: 'GET', url: '/v1/health', headers: { host } })
      expect(ok.statusCode, host).toBe(200)
    }
  })

  it('refuses a foreign Host with 403 host_not_allowed on every route, also those whose own 403 is another body (build, approve-request: was a 500)', async () => {
    gw = await makeTestGateway()
    for (const url of ['/v1/tx/build', '/v1/tx/approve-request', '/v1/tx/sign-and-send', '/v1/tx/preflight', '/v1/skills/register']) {
      const res = await gw.app.inject({ method: 'POST', url, headers: { host: 'evil.example', 'content-type': 'application/json' }, payload: '{}' })
      expect(res.statusCode, url).toBe(403)
      expect(res.headers['content-type'], url).toMatch(/^application\/json/)
      expect(res.json(), url).toEqual({ error: 'host_not_allowed', message: 'Host header "evil.example" is not allowed; use localhost or 127.0.0.1' })
    }
  })
})

describe('POST /v1/tx/build', () => {
  it.each(Object.entries(actions))('builds a %s intent and audits policy_evaluated then tx_built', async (_name, make) => {
    gw = await makeTestGateway()
    const intent = makeIntent({ action: make(), nowMs: gw.clock() })
    const res = await post(gw, '/v1/tx/build', intent)
    expect(res.statusCode).toBe(200)
    const body = res.json()
    expect(Object.keys(body).sort()).toEqual(['description', 'intentId', 'txRequest', 'txRequestHash'])
    expect(body.intentId).toBe(intent.id)
    expect(body.txRequestHash).toMatch(/^0x[0-9a-f]{64}$/)
    expect(body.txRequest).toMatchObject({ chainId: 8453, type: 'eip1559' })
    expect(body.txRequest.data).toMatch(/^0x([0-9a-f]{2})*$/)
    expect(body.txRequest.value).toMatch(/^[0-9]+$/)
    const events = gw.audit.list({ limit: 10 })
    expect(events.map((e) => e.event)).toEqual(['tx_built', 'policy_evaluated'])
    expect(events[1]!.data).toMatchObject({ intentId: intent.id, decision: expect.any(String), reasons: expect.any(Array) })
    expect(events[0]!.data).toMatchObject({ intentId: intent.id, txRequestHash: body.txRequestHash, description: body.description })
  })

  it('a native transfer needs approval by default but still builds', async () => {
    gw = await makeTestGateway()
    const res = await post(gw, '/v1/tx/build', makeIntent({ action: actions.native(), nowMs: gw.clock() }))
    expect(res.statusCode).toBe(200)
    expect(res.json().txRequest).toMatchObject({ to: RECIPIENT, data: '0x', value: '1000000000000000' })
    expect(gw.audit.list({ limit: 2 })[1]!.data.decision).toBe('require_approval')
  })

  it('policy deny is a 403 with the policy body and no tx_built', async () => {
    gw = await makeTestGateway({ policy: { allowedChains: [1] } })
    const res = await post(gw, '/v1/tx/build', makeIntent({ nowMs: gw.clock() }))
    expect(res.statusCode).toBe(403)
    const body = res.json()
    expect(body).toEqual({ error: 'policy_denied', decision: 'deny', reasons: [expect.stringContaining('8453')], policyVersion: '1' })
    const events = gw.audit.list({ limit: 10 })
    expect(events.map((e) => e.event)).toEqual(['policy_evaluated'])
    expect(events[0]!.data).toMatchObject({ decision: 'deny', reasonCodes: ['chain_not_allowed'] })
  })

  it('an intent with a key twice ("amount":"1","amount":"999": a proxy that keeps the first reads another intent than the one signed) is a 400, nothing built or audited', async () => {
    gw = await makeTestGateway()
    const intent = makeIntent({ action: actions.native('1'), nowMs: gw.clock() })
    const payload = JSON.stringify(intent).replace('"amount":"1"', '"amount":"1","amount":"999"')
    const res = await gw.app.inject({ method: 'POST', url: '/v1/tx/build', headers: { 'content-type': 'application/json' }, payload })
    expect(expectValidationShape(res)).toBe('body/action/amount is given twice in one object; send each member once')
    expect(gw.audit.list({ limit: 10 })).toEqual([])
  })

  it('a deadline or timestamp no integer of Unix seconds can hold (1e300, 2^53) is a 400 for every action, as it was for swaps only', async () => {
    gw = await makeTestGateway()
    for (const action of [actions.native("1"), actions.transfer(), actions.approve()]) {
      const intent = makeIntent({ action, nowMs: gw.clock() })
      for (const payload of [
        JSON.stringify(intent).replace(/"deadline":\d+/, '"deadline":1e300'),
        JSON.stringify(intent).replace(/"deadline":\d+/, `"deadline":${2 ** 53}`),
        JSON.stringify(intent).replace(/"timestamp":\d+/, '"timestamp":1e300'),
      ]) {
        const res = await gw.app.inject({ method: 'POST', url: '/v1/tx/build', headers: { 'content-type': 'application/json' }, payload })
        expect(expectValidationShape(res)).toMatch(/(deadline|timestamp) must be <= 9007199254740991/)
      }
    }
  })

  it('an intent past its deadline is refused', async () => {
    gw = await makeTestGateway()
    const intent = makeIntent({ nowMs: gw.clock(), deadline: Math.floor(gw.clock() / 1000) - 1 })
    const res = await post(gw, '/v1/tx/build', intent)
    expect(res.statusCode).toBe(403)
    expect(res.json().reasons.join(' ')).toMatch(/deadline/)
  })

  it('a router that does not belong to the chain is a 400 naming it', async () => {
    gw = await makeTestGateway()
    const action = { ...actions.swapIn(), router: '0x68b3465833fb72A70ecDF485E0e4C7bD8665Fc45' } as const
    const msg = expectValidationShape(await post(gw, '/v1/tx/build', makeIntent({ action, nowMs: gw.clock() })))
    expect(msg.toLowerCase()).toContain('0x68b3465833fb72a70ecdf485e0e4c7bd8665fc45')
    expect(msg).toContain('8453')
  })

  it.each([
    ['transfer recipient', { ...actions.transfer(), to: '0x2222222222222222222222222222222222222aBc' }, 'action.to'],
    ['swap token', { ...actions.swapIn(), assetIn: { kind: 'erc20', address: '0x833589fcD6eDb6E08f4c7C32D4f71b54bdA02913' } }, 'action.assetIn.address'],
  ] as const)('a mixed-case address with a wrong EIP-55 checksum (%s) is a 400 naming the field, not a 500, and nothing is audited', async (_name, action, field) => {
    gw = await makeTestGateway()
    const intent = makeIntent({ action, nowMs: gw.clock() })
    const msg = expectValidationShape(await post(gw, '/v1/tx/build', intent))
    expect(msg).toContain(`${field} `)
    expect(msg).toContain('EIP-55 checksum')
    expect(gw.audit.list({ limit: 10, intentId: intent.id })).toEqual([])
    // The same addresses in lower case build.
    const lower = JSON.parse(JSON.stringify(intent).replace(/0x[0-9a-fA-F]{40}/g, (a) => a.toLowerCase()))
    expect((await post(gw, '/v1/tx/build', lower)).statusCode).toBe(200)
  })

  it.each(Object.entries(actions))('a %s intent with every address in upper case builds the same transaction (no 500: viem refuses that case)', async (_name, make) => {
    gw = await makeTestGateway({ policy: { maxTxPerHour: 100 } })
    const intent = makeIntent({ action: make(), nowMs: gw.clock() })
    const recase = (i: unknown, f: (hex: string) => string) => JSON.parse(JSON.stringify(i).replace(/0x([0-9a-fA-F]{40})\b/g, (_a, hex: string) => `0x${f(hex)}`))
    const upper = await post(gw, '/v1/tx/build', recase(intent, (h) => h.toUpperCase()))
    expect(upper.statusCode).toBe(200)
    const lower = await post(gw, '/v1/tx/build', recase({ ...intent, id: crypto.randomUUID() }, (h) => h.toLowerCase()))
    expect(lower.statusCode).toBe(200)
    expect(upper.json().txRequestHash).toBe(lower.json().txRequestHash)
    expect(JSON.stringify(upper.json().txRequest).toLowerCase()).toBe(JSON.stringify(lower.json().txRequest).toLowerCase())
    expect(upper.json().description.toLowerCase()).toBe(lower.json().description.toLowerCase())
    // Upper-case addresses come back in their EIP-55 form.
    expect(upper.json().txRequest.to).toBe(getAddress(upper.json().txRequest.to))
  })

  it('an amount beyond uint256 is a 400, not a 500', async () => {
    gw = await makeTestGateway()
    const action = { ...actions.transfer(), amount: '9'.repeat(78) } as const
    expectValidationShape(await post(gw, '/v1/tx/build', makeIntent({ action, nowMs: gw.clock() })))
  })

  describe('bad input never yields a 500', () => {
    const cases: Array<[string, (i: Record<string, any>) => unknown]> = [
      ['unknown top-level field', (i) => ({ ...i, extra: 1 })],
      ['unknown chain field', (i) => ({ ...i, chain: { ...i.chain, foo: 'x' } })],
      ['unknown wallet field', (i) => ({ ...i, wallet: { ...i.wallet, key: '0x00' } })],
      ['unknown action field', (i) => ({ ...i, action: { ...i.action, data: '0xdeadbeef' } })],
      ['unknown asset field', (i) => ({ ...i, action: { ...i.action, asset: { ...i.action.asset, x: 1 } } })],
      ['unknown constraints field', (i) => ({ ...i, constraints: { ...i.constraints, nonce: 1 } })],
      ['unknown metadata field', (i) => ({ ...i, metadata: { source: 'a', raw: '0x' } })],
      ['number where an amount string is required', (i) => ({ ...i, action: { ...i.action, amount: 5000000 } })],
      ['number for maxGasWei', (i) => ({ ...i, constraints: { ...i.constraints, maxGasWei: 1 } })],
      ['string chainId', (i) => ({ ...i, chain: { type: 'evm', chainId: '8453' } })],
      ['unsupported chainId', (i) => ({ ...i, chain: { type: 'evm', chainId: 5 } })],
      ['bad address', (i) => ({ ...i, wallet: { address: '0x123' } })],
      ['missing action', ({ action: _a, ...rest }) => rest],
      ['unknown action type', (i) => ({ ...i, action: { ...i.action, type: 'sign_raw' } })],
      ['non-uuid id', (i) => ({ ...i, id: 'abc' })],
      ['array body', () => [1, 2, 3]],
      ['string body', () => 'hello'],
      ['null body', () => null],
    ]
    it.each(cases)('%s', async (_name, mutate) => {
      gw = await makeTestGateway()
      const res = await gw.app.inject({
        method: 'POST',
        url: '/v1/tx/build',
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify(mutate(makeIntent({ nowMs: gw.clock() }) as unknown as Record<string, any>)),
      })
      expectValidationShape(res)
    })

    it('names the failing path in the message', async () => {
      gw = await makeTestGateway()
      const i = makeIntent({ nowMs: gw.clock() }) as unknown as Record<string, any>
      const msg = expectValidationShape(await post(gw, '/v1/tx/build', { ...i, constraints: { ...i.constraints, nonce: 1 } }))
      expect(msg).toContain('body/constraints')
      expect(msg).toContain('nonce')
    })

    it('malformed JSON', async () => {
      gw = await makeTestGateway()
      const res = await gw.app.inject({ method: 'POST', url: '/v1/tx/build', headers: { 'content-type': 'application/json' }, payload: '{"version": "1",' })
      expect(expectValidationShape(res)).toMatch(/JSON/)
    })

    it('empty body', async () => {
      gw = await makeTestGateway()
      const res = await gw.app.inject({ method: 'POST', url: '/v1/tx/build', headers: { 'content-type': 'application/json' }, payload: '' })
      expectValidationShape(res)
    })

    it('prototype pollution attempt', async () => {
      gw = await makeTestGateway()
      const res = await gw.app.inject({ method: 'POST', url: '/v1/tx/build', headers: { 'content-type': 'application/json' }, payload: '{"__proto__": {"admin": true}}' })
      expectValidationShape(res)
    })

    it('a text/plain body is a 415 in the same shape as any other type that is not JSON, on every body route (found by review: a 400 "body must be object")', async () => {
      gw = await makeTestGateway()
      const form = await gw.app.inject({ method: 'POST', url: '/v1/tx/build', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'a=1' })
      expect(form.statusCode).toBe(415)
      for (const url of ['/v1/tx/build', '/v1/tx/preflight', '/v1/tx/approve-request', '/v1/tx/sign-and-send', `/v1/approvals/${randomUUID()}/decide`]) {
        const res = await gw.app.inject({ method: 'POST', url, headers: { 'content-type': 'text/plain' }, payload: 'transfer 5 USDC' })
        expect(res.statusCode, url).toBe(415)
        expect(res.json(), url).toEqual(form.json())
      }
    })

    it('an unsupported content type is a 415 with a clear message', async () => {
      gw = await makeTestGateway()
      const res = await gw.app.inject({ method: 'POST', url: '/v1/tx/build', headers: { 'content-type': 'application/xml' }, payload: '<intent/>' })
      expect(res.statusCode).toBe(415)
      expect(res.json()).toEqual({ statusCode: 415, error: 'Unsupported Media Type', message: expect.stringContaining('application/json') })
    })

    it('a huge body is a 413 with a clear message', async () => {
      gw = await makeTestGateway()
      const i = makeIntent({ nowMs: gw.clock() })
      const res = await post(gw, '/v1/tx/build', { ...i, metadata: { note: 'x'.repeat(200_000) } })
      expect(res.statusCode).toBe(413)
      expect(res.json()).toEqual({ statusCode: 413, error: 'Payload Too Large', message: expect.stringContaining('limit') })
    })

    it('a deeply nested body', async () => {
      gw = await makeTestGateway()
      const deep = '{"a":'.repeat(5000) + '1' + '}'.repeat(5000)
      const res = await gw.app.inject({ method: 'POST', url: '/v1/tx/build', headers: { 'content-type': 'application/json' }, payload: deep })
      expectValidationShape(res)
    })
  })

  describe('rate limit', () => {
    it('allows maxTxPerHour intents per wallet per sliding hour, counts an intent once, and survives a restart', async () => {
      gw = await makeTestGateway({ policy: { maxTxPerHour: 3 } })
      const wallet = WALLET
      const first = makeIntent({ nowMs: gw.clock(), wallet })
      for (let n = 0; n < 3; n++) {
        const intent = n === 0 ? first : makeIntent({ nowMs: gw.clock(), wallet })
        expect((await post(gw, '/v1/tx/build', intent)).statusCode).toBe(200)
        gw.clock.advance(1000)
      }
      // The same intent again is not a new transaction.
      expect((await post(gw, '/v1/tx/build', first)).statusCode).toBe(200)
      // Another wallet is unaffected; the same wallet in another case is the same wallet.
      expect((await post(gw, '/v1/tx/build', makeIntent({ nowMs: gw.clock(), wallet: '0x3333333333333333333333333333333333333333' }))).statusCode).toBe(200)
      const upper = ('0x' + wallet.slice(2).toUpperCase()) as `0x${string}`
      const denied = await post(gw, '/v1/tx/build', makeIntent({ nowMs: gw.clock(), wallet: upper }))
      expect(denied.statusCode).toBe(403)
      expect(denied.json().reasons[0]).toMatch(/rate limit.*3.*3/)

      // Restart on the same data dir: the records are still there.
      const { dataDir, clock } = gw
      await gw.close()
      gw = await makeTestGateway({ policy: { maxTxPerHour: 3 }, dataDir, clock })
      expect((await post(gw, '/v1/tx/build', makeIntent({ nowMs: gw.clock(), wallet }))).statusCode).toBe(403)
      // An hour after the first record, one slot frees up.
      gw.clock.advance(3_600_000 - 3000 + 1)
      expect((await post(gw, '/v1/tx/build', makeIntent({ nowMs: gw.clock(), wallet }))).statusCode).toBe(200)
      expect((await post(gw, '/v1/tx/build', makeIntent({ nowMs: gw.clock(), wallet }))).statusCode).toBe(403)
    })

    it('concurrent builds for one wallet cannot exceed the limit', async () => {
      gw = await makeTestGateway({ policy: { maxTxPerHour: 5 } })
      const results = await Promise.all(
        Array.from({ length: 20 }, () => post(gw, '/v1/tx/build', makeIntent({ nowMs: gw.clock() }))),
      )
      expect(results.filter((r) => r.statusCode === 200)).toHaveLength(5)
      expect(results.filter((r) => r.statusCode === 403)).toHaveLength(15)
    })
  })
})

describe('GET /v1/approvals/history', () => {
  it('returns events newest first with the default limit of 20', async () => {
    gw = await makeTestGateway({ policy: { maxTxPerHour: 1000 } })
    for (let n = 0; n < 15; n++) {
      await post(gw, '/v1/tx/build', makeIntent({ nowMs: gw.clock() }))
      gw.clock.advance(10)
    }
    const res = await gw.app.inject({ method: 'GET', url: '/v1/approvals/history' })
    expect(res.statusCode).toBe(200)
    const { events } = res.json()
    expect(events).toHaveLength(20)
    const times = events.map((e: { timestamp: number }) => e.timestamp)
    expect([...times].sort((a, b) => b - a)).toEqual(times)
    expect(Object.keys(events[0]).sort()).toEqual(['data', 'event', 'id', 'intentId', 'timestamp'])
    expect(events[0].event).toBe('tx_built')
  })

  it.each([
    ['0', 1],
    ['-5', 1],
    ['1', 1],
    ['7', 7],
    ['100', 100],
    ['1000', 100],
    ['abc', 20],
    ['', 20],
    ['2.7', 2],
    // Found by review: numbers beyond the finite ones got the default of 20.
    ['Infinity', 100],
    ['1e400', 100],
    ['-Infinity', 1],
    ['-1e400', 1],
    ['NaN', 20],
  ])('clamps limit=%s to %i', async (limit, expected) => {
    gw = await makeTestGateway({ policy: { maxTxPerHour: 1000 } })
    for (let n = 0; n < 60; n++) await post(gw, '/v1/tx/build', makeIntent({ nowMs: gw.clock() }))
    const res = await gw.app.inject({ method: 'GET', url: `/v1/approvals/history?limit=${limit}` })
    expect(res.statusCode).toBe(200)
    expect(res.json().events).toHaveLength(expected)
  })

  it('shows a row inserted into audit.db by hand, marked, instead of failing with a 500', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'cs-gw-history-'))
    gw = await makeTestGateway({ dataDir, policy: { maxTxPerHour: 1000 } })
    await post(gw, '/v1/tx/build', makeIntent({ nowMs: gw.clock() }))
    const seq = insertRawAuditRow(path.join(dataDir, 'audit.db'), { event: 'tx_built', intentId: 'forged', data: '{"intentId":' })
    const res = await gw.app.inject({ method: 'GET', url: '/v1/approvals/history' })
    expect(res.statusCode).toBe(200)
    const events = res.json().events as Array<{ event: string; intentId: string; data: Record<string, unknown> }>
    expect(events[0]).toMatchObject({ event: 'tx_built', intentId: 'forged', data: { intentId: 'forged', malformedRow: expect.stringContaining(`audit.db row ${seq} (tx_built): its data is not a JSON object`) } })
    expect(events.slice(1).map((e) => e.event)).toEqual(['tx_built', 'policy_evaluated'])
  })

  it('is an empty list when nothing happened', async () => {
    gw = await makeTestGateway()
    const res = await gw.app.inject({ method: 'GET', url: '/v1/approvals/history' })
    expect(res.json()).toEqual({ events: [] })
  })
})
