// signAndSendSettled against a local HTTP server playing the gateway: which
// failures are repeated with the same intent and token, which are final, and
// when the answer is "the outcome is unknown".
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { makeIntent } from '@countersign/shared/testing/intents'
import { CountersignClient } from './client.js'
import { PolicyDeniedError, SendOutcomeUnknownError, ServiceUnreachableError } from './errors.js'
import { classifySendFailure, signAndSendSettled } from './signAndSendSettled.js'

const TX = `0x${'cd'.repeat(32)}`
const TOKEN = '7d2c1a9e-0000-4000-8000-000000000001'
const servers: http.Server[] = []
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections()
    await new Promise((r) => s.close(r))
  }
})

type Answer = (res: http.ServerResponse, req: http.IncomingMessage) => void
/** A gateway answering the n-th sign-and-send with answers[n] (the last one again after that); records each body. */
async function gateway(answers: Answer[]): Promise<{ url: string; bodies: Array<{ intent: { id: string }; approvalTokenId?: string }> }> {
  const bodies: Array<{ intent: { id: string }; approvalTokenId?: string }> = []
  const server = http.createServer((req, res) => {
    let raw = ''
    req.on('data', (d) => (raw += d))
    req.on('end', () => {
      bodies.push(JSON.parse(raw))
      answers[Math.min(bodies.length, answers.length) - 1]!(res, req)
    })
  })
  servers.push(server)
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bodies }
}
const json =
  (status: number, body: unknown): Answer =>
  (res) => {
    res.writeHead(status, { 'content-type': 'application/json' })
    res.end(JSON.stringify(body))
  }
/** Never answers within the test's timeouts (a slow node behind the gateway). */
const silent: Answer = () => undefined
/** Reads the request, then drops the connection (a gateway restart). */
const drop: Answer = (_res, req) => req.socket.destroy()
const signed = (intentId: string) => json(200, { intentId, signedTx: '0x02', txHash: TX, broadcast: true, broadcastError: null })
const denied = json(403, { error: 'policy_denied', reasons: ['rate limit: 10 per hour'] })
const fast = { sendTimeoutMs: 200, sendRetryDelayMs: 10 }

describe('signAndSendSettled', () => {
  it('a timeout is followed by the same intent and token again, and the answer to the repeat is the result', async () => {
    const intent = makeIntent()
    const gw = await gateway([silent, signed(intent.id)])
    const sent = await signAndSendSettled(new CountersignClient({ url: gw.url }), intent, TOKEN, fast)
    expect(sent.txHash).toBe(TX)
    expect(gw.bodies.map((b) => [b.intent.id, b.approvalTokenId])).toEqual([
      [intent.id, TOKEN],
      [intent.id, TOKEN],
    ])
  })

  it('a connection dropped after the request left, and 503 signer_unavailable, are repeated too', async () => {
    const intent = makeIntent()
    const gw = await gateway([drop, json(503, { error: 'signer_unavailable', message: 'the signer did not answer in time' }), signed(intent.id)])
    await expect(signAndSendSettled(new CountersignClient({ url: gw.url }), intent, undefined, fast)).resolves.toMatchObject({ txHash: TX })
    expect(gw.bodies).toHaveLength(3)
  })

  it('no clear answer after the repeats: SendOutcomeUnknownError with the intent id, never a plain timeout', async () => {
    const intent = makeIntent()
    const gw = await gateway([silent])
    const err = await signAndSendSettled(new CountersignClient({ url: gw.url }), intent, TOKEN, { ...fast, sendRetries: 2 }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(SendOutcomeUnknownError)
    expect(err).toMatchObject({ intentId: intent.id, chainId: intent.chain.chainId, attempts: 3, code: 'send_outcome_unknown' })
    expect((err as Error).message).toMatch(/may have been signed and broadcast: do not send a new intent/)
    expect(gw.bodies).toHaveLength(3)
  })

  it('after an unclear attempt a refusal of the repeat proves nothing: still outcome unknown', async () => {
    const gw = await gateway([silent, denied])
    const err = await signAndSendSettled(new CountersignClient({ url: gw.url }), makeIntent(), undefined, { ...fast, sendRetries: 1 }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(SendOutcomeUnknownError)
    expect((err as Error).message).toMatch(/first: .*no answer within 200 ms; last: policy denied/)
  })

  it('a refusal of the first attempt is the answer at once', async () => {
    const gw = await gateway([denied])
    await expect(signAndSendSettled(new CountersignClient({ url: gw.url }), makeIntent(), undefined, fast)).rejects.toBeInstanceOf(PolicyDeniedError)
    expect(gw.bodies).toHaveLength(1)
  })

  it('a gateway that never accepted a connection: ServiceUnreachableError (nothing was sent), after the repeats', async () => {
    const gw = await gateway([silent])
    const url = gw.url
    const s = servers.pop()!
    await new Promise((r) => s.close(r))
    const err = await signAndSendSettled(new CountersignClient({ url }), makeIntent(), undefined, { ...fast, sendRetries: 1 }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(ServiceUnreachableError)
    expect((err as ServiceUnreachableError).neverConnected).toBe(true)
  })

  it('the caller aborting while a request is out: outcome unknown, not the bare abort', async () => {
    const gw = await gateway([silent])
    const ac = new AbortController()
    setTimeout(() => ac.abort(new Error('host cancelled')), 100)
    const err = await signAndSendSettled(new CountersignClient({ url: gw.url }), makeIntent(), undefined, { sendTimeoutMs: 5_000, signal: ac.signal }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(SendOutcomeUnknownError)
  })

  it('sign-and-send waits longer than reads by default', async () => {
    const gw = await gateway([silent])
    const client = new CountersignClient({ url: gw.url, requestTimeoutMs: 100, sendTimeoutMs: 400 })
    const started = Date.now()
    await signAndSendSettled(client, makeIntent(), undefined, { sendRetries: 0 }).catch(() => undefined)
    expect(Date.now() - started).toBeGreaterThanOrEqual(390)
  })

  it('classifies: proxy pages and 5xx are unknown, the service\'s 4xx and no_rpc_client refused', async () => {
    const { errorFromResponse, RequestTimeoutError } = await import('./errors.js')
    expect(classifySendFailure(errorFromResponse(502, '<html>Bad Gateway</html>'))).toBe('unknown')
    expect(classifySendFailure(errorFromResponse(504, { error: 'Gateway Timeout' }))).toBe('unknown')
    expect(classifySendFailure(errorFromResponse(500, { error: 'internal_error' }))).toBe('unknown')
    expect(classifySendFailure(new RequestTimeoutError('POST /v1/tx/sign-and-send', 1))).toBe('unknown')
    expect(classifySendFailure(errorFromResponse(403, { error: 'invalid_approval_token' }))).toBe('refused')
    expect(classifySendFailure(errorFromResponse(408, { error: 'Request Timeout' }))).toBe('unknown')
    expect(classifySendFailure(errorFromResponse(502, { error: 'no_rpc_client' }))).toBe('refused')
    // The service's own refusals before it reads a body (found by review: read as unknown, retried, "may have been sent").
    for (const [status, error] of [[413, 'Payload Too Large'], [414, 'URI Too Long'], [415, 'Unsupported Media Type'], [431, 'Request Header Fields Too Large']] as const) {
      expect(classifySendFailure(errorFromResponse(status, { statusCode: status, error, message: 'refused' })), String(status)).toBe('refused')
    }
    // The same status from something else (a proxy's page, another body) is still unknown.
    expect(classifySendFailure(errorFromResponse(413, '<html>413 Request Entity Too Large</html>'))).toBe('unknown')
  })
})
