// Issue 16, signed webhooks, end to end: real signer, approver and gateway
// processes on a real anvil chain; a real HTTP receiver that checks every
// signature the way docs/webhooks.md tells receivers to, fails its first
// three deliveries, and sees the approver and the gateway restarted while
// deliveries are still owed.
import { createHmac, timingSafeEqual } from 'node:crypto'
import { chmodSync, statSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anvilAccounts, startAnvil, type Anvil } from './support/anvil.js'
import { freePort, waitFor } from './support/processes.js'
import { importKey, Stack } from './support/stack.js'
import { nativeIntent } from './support/intents.js'

const SECRET = 'whsec-' + 'k'.repeat(40)
const owner = anvilAccounts[0]

interface Received {
  body: string
  event: { id: string; type: string; intentId: string; data: Record<string, unknown> }
  eventIdHeader: string | undefined
  signatureValid: boolean
}

/** The receiver of docs/webhooks.md: HMAC-SHA256 over "t.body", constant-time compare, 5-minute window. */
function verify(header: string | undefined, body: string): boolean {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header ?? '')
  if (!m || Math.abs(Date.now() / 1000 - Number(m[1])) > 300) return false
  const expected = createHmac('sha256', SECRET).update(`${m[1]}.${body}`).digest()
  return timingSafeEqual(expected, Buffer.from(m[2]!, 'hex'))
}

let anvil: Anvil
let receiver: Server
let receiverUrl: string
const received: Received[] = []
let refused = 0

beforeAll(async () => {
  anvil = await startAnvil({ chainId: 8453 })
  const port = await freePort()
  receiver = createServer((req, res) => {
    let body = ''
    req.on('data', (c) => (body += c))
    req.on('end', () => {
      // The first three deliveries fail: the approver must retry the first event and hold back the rest.
      if (refused < 3) {
        refused += 1
        res.writeHead(500).end('not yet')
        return
      }
      const sig = req.headers['x-countersign-signature'] as string | undefined
      received.push({ body, event: JSON.parse(body), eventIdHeader: req.headers['x-countersign-event-id'] as string | undefined, signatureValid: verify(sig, body) })
      res.writeHead(204).end()
    })
  })
  await new Promise<void>((r) => receiver.listen(port, '127.0.0.1', r))
  receiverUrl = `http://127.0.0.1:${port}/hooks/countersign`
})
afterAll(async () => {
  await new Promise((r) => receiver?.close(r))
  await anvil?.stop()
})

describe('signed webhooks', () => {
  let stack: Stack
  let approverEnv: Record<string, string>
  beforeAll(async () => {
    stack = new Stack({ rpcUrls: { 8453: anvil.rpcUrl }, policy: { maxTxPerHour: 1000 } })
    await importKey(stack.dataDir, owner.privateKey)
    const secretFile = path.join(stack.dataDir, 'webhook-secret')
    writeFileSync(secretFile, SECRET + '\n')
    chmodSync(secretFile, 0o600)
    approverEnv = { SERVICE_WEBHOOK_URL: receiverUrl, SERVICE_WEBHOOK_SECRET_FILE: secretFile, SERVICE_WEBHOOK_BACKOFF_MS: '1000', SERVICE_APPROVAL_TTL_MS: '4000' }
    await stack.start({ approver: true, approverEnv })
  })
  afterAll(() => stack?.stop())

  it('delivers requested, decided, broadcast and expired events in order, signed, after 3 failures and a restart of both the approver and the gateway', async () => {
    // A: requested and approved while the receiver is failing.
    const a = nativeIntent()
    const blocked = stack.post('/v1/tx/approve-request', a)
    const p = await waitFor(async () => (await stack.get('/v1/approvals/pending')).body.pending.find((x: { summary: { intentId: string } }) => x.summary.intentId === a.id) ?? null)
    expect((await stack.decide(p.requestId, true)).status).toBe(200)
    const approved = await blocked
    expect(approved.body.approved).toBe(true)
    const approvalTokenId = approved.body.approvalTokenId as string

    // Both processes go down with deliveries still owed; the broadcast happens while the approver is down.
    await stack.approver!.stop()
    await stack.gateway.stop()
    // The first success can come no earlier than 7 s after the first attempt (1 + 2 + 4 s of backoff): the decision is still owed.
    expect(received.length).toBeLessThan(2)
    await stack.startGateway()
    const sent = await stack.post('/v1/tx/sign-and-send', { intent: a, approvalTokenId })
    expect(sent.status).toBe(200)
    expect(sent.body.broadcast).toBe(true)
    await stack.startApprover(approverEnv)

    // B: requested after the restart, never decided: it expires.
    const b = nativeIntent()
    const expired = await stack.post('/v1/tx/approve-request', b)
    expect(expired.body.approved).toBe(false)

    await waitFor(() => received.length >= 5 || null, { timeoutMs: 30_000, what: 'five webhook deliveries' })
    await new Promise((r) => setTimeout(r, 500))
    expect(refused).toBe(3)
    expect(received.map((r) => [r.event.type, r.event.intentId])).toEqual([
      ['approval_requested', a.id],
      ['approval_decided', a.id],
      ['tx_broadcast', a.id],
      ['approval_requested', b.id],
      ['approval_expired', b.id],
    ])
    for (const r of received) {
      expect(r.signatureValid).toBe(true)
      expect(r.eventIdHeader).toBe(r.event.id)
      // Nothing a webhook carries can approve: not the approval token, not the operator token.
      expect(r.body).not.toContain(approvalTokenId)
      expect(r.body).not.toContain(stack.operatorToken)
    }
    expect(new Set(received.map((r) => r.event.id)).size).toBe(5)
    expect(received[1]!.event.data).toMatchObject({ approved: true, requestId: p.requestId, via: 'web' })
    expect(received[2]!.event.data).toEqual({ txHash: sent.body.txHash, chainId: 8453 })

    // The dashboard's list: the first event took 4 attempts; all delivered.
    const list = await stack.get('/v1/approvals/webhooks')
    expect(list.status).toBe(200)
    expect(list.body.configured).toBe(true)
    const deliveries = [...list.body.deliveries].reverse()
    expect(deliveries.map((d: { status: string }) => d.status)).toEqual(['delivered', 'delivered', 'delivered', 'delivered', 'delivered'])
    expect(deliveries[0]).toMatchObject({ type: 'approval_requested', attempts: 4, lastError: null })
    expect(JSON.stringify(list.body)).not.toContain(SECRET)
    expect(statSync(path.join(stack.dataDir, 'webhooks.db')).mode & 0o777).toBe(0o600)
  }, 90_000)

  it('a broadcast the chain refuses is delivered as broadcast_failed, signed', async () => {
    const c = nativeIntent()
    const blocked = stack.post('/v1/tx/approve-request', c)
    const p = await waitFor(async () => (await stack.get('/v1/approvals/pending')).body.pending.find((x: { summary: { intentId: string } }) => x.summary.intentId === c.id) ?? null)
    expect((await stack.decide(p.requestId, true)).status).toBe(200)
    const approved = await blocked
    // The wallet is emptied between the approval and the broadcast: the node refuses the signed transaction.
    const rpc = (method: string, params: unknown[]) =>
      fetch(anvil.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) }).then((r) => r.json())
    await rpc('anvil_setBalance', [owner.address, '0x0'])
    const sent = await stack.post('/v1/tx/sign-and-send', { intent: c, approvalTokenId: approved.body.approvalTokenId })
    expect(sent.body.broadcast).toBe(false)
    const failed = await waitFor(() => received.find((r) => r.event.type === 'broadcast_failed' && r.event.intentId === c.id) ?? null, { timeoutMs: 20_000, what: 'the broadcast_failed webhook' })
    expect(failed.signatureValid).toBe(true)
    expect(failed.event.data.txHash).toBe(sent.body.txHash)
    expect(typeof failed.event.data.error).toBe('string')
  }, 60_000)
})

describe('webhook configuration', () => {
  it('the approver refuses to start with a secret file others can read', async () => {
    const stack = new Stack({ rpcUrls: { 8453: anvil.rpcUrl } })
    const secretFile = path.join(stack.dataDir, 'webhook-secret')
    writeFileSync(secretFile, SECRET)
    chmodSync(secretFile, 0o644)
    await stack.startSigner()
    try {
      await expect(stack.startApprover({ SERVICE_WEBHOOK_URL: receiverUrl, SERVICE_WEBHOOK_SECRET_FILE: secretFile })).rejects.toThrow()
      expect(stack.approver!.output()).toMatch(/readable by group or others.*chmod 600/)
    } finally {
      await stack.stop()
    }
  }, 30_000)
})

