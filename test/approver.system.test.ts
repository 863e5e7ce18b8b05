// Issue 7 end to end: real signer, approver and gateway processes, a real
// anvil chain; approvals decided over HTTP, by the auto mode, and on a real
// terminal (tmux) in cli mode.
import { execFile } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { once } from 'node:events'
import http from 'node:http'
import net from 'node:net'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseEther, type Address } from 'viem'
import WebSocket, { WebSocketServer } from 'ws'
import type { TxIntent } from '@countersign/shared'
import { anvilAccounts, startAnvil, type Anvil } from './support/anvil.js'
import { freePort, repoRoot, spawnService, waitFor } from './support/processes.js'

const approveCli = path.join(repoRoot, 'services/approver/dist/cli/approve.js')
import { entries, importKey, Stack } from './support/stack.js'
import { rawExchange } from '@countersign/shared/testing/rawExchange'
import { BOB, nativeIntent } from './support/intents.js'
import { startWithTerminalApprover } from './support/terminalApprover.js'

const owner = anvilAccounts[0]
const WALLET = owner.address as Address
let anvil: Anvil

async function pendingFor(stack: Stack, intent: TxIntent) {
  return waitFor(
    async () => {
      const r = await stack.get('/v1/approvals/pending')
      return (r.body.pending as Array<{ requestId: string; summary: { intentId: string; txRequestHash: string; action: string } }>).find((p) => p.summary.intentId === intent.id) ?? null
    },
    // Generous: after an approver restart the request comes back on the gateway's next poll, which under a
    // full parallel test run on two cores once took longer than 10 s (a timed test is not the point here).
    { timeoutMs: 30_000, what: 'the request to appear in the pending list' },
  )
}

async function receiptOf(stack: Stack, hash: string) {
  return waitFor(async () => {
    const r = await stack.get(`/v1/tx/${hash}`)
    return r.status === 200 ? r.body : null
  })
}

beforeAll(async () => {
  anvil = await startAnvil({ chainId: 8453 })
})
afterAll(async () => {
  await anvil?.stop()
})


/** A connection that sends nothing, once the server has it. */
async function openSilentConnection(port: number): Promise<net.Socket> {
  const socket = net.connect(port, '127.0.0.1')
  socket.on('error', () => undefined)
  await once(socket, 'connect')
  return socket
}

describe('web mode', () => {
  let stack: Stack
  beforeAll(async () => {
    stack = new Stack({ rpcUrls: { 8453: anvil.rpcUrl }, policy: { maxTxPerHour: 1000 } })
    await importKey(stack.dataDir, owner.privateKey)
    await stack.start({ approver: true })
  })
  afterAll(() => stack?.stop())

  it('approve over HTTP: the blocked approve-request returns a token that signs and mines', async () => {
    const intent = nativeIntent()
    const blocked = stack.post('/v1/tx/approve-request', intent)
    const p = await pendingFor(stack, intent)
    expect(p.summary.action).toContain('Transfer 0.5 ETH (native)')
    const decided = await stack.decide(p.requestId, true)
    expect(decided).toEqual({ status: 200, body: { decided: true, requestId: p.requestId, approved: true } })
    const res = await blocked
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({
      intentId: intent.id,
      approved: true,
      approvalRequired: true,
      approvalTokenId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      txRequestHash: p.summary.txRequestHash,
      riskScore: 0,
      warnings: [`this wallet has not sent to ${BOB} before`],
      gasEstimate: '21000',
      policyDecision: { decision: 'require_approval', reasons: [expect.stringContaining('approval threshold')], policyVersion: '1' },
    })
    const sent = await stack.post('/v1/tx/sign-and-send', { intent, approvalTokenId: res.body.approvalTokenId })
    expect(sent.status).toBe(200)
    expect((await receiptOf(stack, sent.body.txHash)).status).toBe('success')
    const events = (await stack.get('/v1/approvals/history?limit=50')).body.events.filter((e: { intentId: string }) => e.intentId === intent.id).map((e: { event: string }) => e.event).reverse()
    expect(events).toEqual(['preflight_completed', 'policy_evaluated', 'approve_request_created', 'approval_requested', 'approval_granted', 'web_approval_decided', 'tx_built', 'policy_evaluated', 'signature_created', 'tx_broadcast'])
  })

  it('the approver SIGKILLed while three callers wait: once it is back, the gateway asks again, the requests return under new ids, and the operator’s decisions reach the same callers', async () => {
    const intents = [nativeIntent(), nativeIntent(), nativeIntent()]
    const blocked = intents.map((i) => stack.post('/v1/tx/approve-request', i))
    const before = await Promise.all(intents.map((i) => pendingFor(stack, i)))
    stack.approver!.child.kill('SIGKILL')
    await stack.approver!.exited()
    await stack.startApprover()
    // Pending requests lived in the approver's memory: the gateway's waiting room puts them back.
    const after = await Promise.all(intents.map((i) => pendingFor(stack, i)))
    for (const [n, p] of after.entries()) {
      expect(p.requestId).not.toBe(before[n]!.requestId)
      expect(p.summary.txRequestHash).toBe(before[n]!.summary.txRequestHash)
      expect((await stack.decide(before[n]!.requestId, true)).status).toBe(404)
    }
    expect((await stack.decide(after[0]!.requestId, true)).status).toBe(200)
    expect((await stack.decide(after[1]!.requestId, false)).status).toBe(200)
    expect((await stack.decide(after[2]!.requestId, true)).status).toBe(200)
    const [first, second, third] = await Promise.all(blocked)
    expect(first).toMatchObject({ status: 200, body: { intentId: intents[0]!.id, approved: true, approvalTokenId: expect.any(String) } })
    expect(second).toMatchObject({ status: 403, body: { intentId: intents[1]!.id, approved: false, reason: 'user_declined' } })
    expect(third).toMatchObject({ status: 200, body: { intentId: intents[2]!.id, approved: true } })
    const sent = await stack.post('/v1/tx/sign-and-send', { intent: intents[0], approvalTokenId: first!.body.approvalTokenId })
    expect(sent.status).toBe(200)
    expect((await receiptOf(stack, sent.body.txHash)).status).toBe('success')
    expect(await stack.auditVerify()).toMatch(/^audit chain OK: \d+ events/)
  })

  it('deny over HTTP: 403 with the decline body; a decision without the operator token is refused and the request stays pending', async () => {
    const intent = nativeIntent()
    const blocked = stack.post('/v1/tx/approve-request', intent)
    const p = await pendingFor(stack, intent)
    expect((await stack.decide(p.requestId, true, null)).status).toBe(401)
    expect((await stack.decide(p.requestId, true, 'not-the-token')).status).toBe(401)
    expect((await stack.get('/v1/approvals/pending')).body.pending.map((x: { requestId: string }) => x.requestId)).toContain(p.requestId)
    expect((await stack.decide(p.requestId, false)).status).toBe(200)
    const res = await blocked
    expect(res.status).toBe(403)
    expect(res.body).toEqual({
      intentId: intent.id,
      txRequestHash: p.summary.txRequestHash,
      policyDecision: { decision: 'require_approval', reasons: expect.any(Array), policyVersion: '1' },
      approvalRequired: true,
      approved: false,
      reason: 'user_declined',
    })
    expect((await stack.decide(p.requestId, true)).status).toBe(404)
  })

  it('the terminal approval client lists and decides with the operator token', async () => {
    const intent = nativeIntent(parseEther('0.05').toString())
    const blocked = stack.post('/v1/tx/approve-request', intent)
    const p = await pendingFor(stack, intent)
    const cli = (args: string[]) =>
      new Promise<{ code: number | null; out: string }>((resolve) => {
        execFile(process.execPath, [approveCli, ...args, '--url', stack.url, '--data-dir', stack.dataDir], { env: { PATH: process.env.PATH ?? '' } }, (err, stdout, stderr) =>
          resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: stdout + stderr }),
        )
      })
    const listed = await cli(['list'])
    expect(listed.code).toBe(0)
    expect(listed.out).toContain('Transfer 0.05 ETH (native)')
    expect(listed.out).toContain(p.requestId)
    const approved = await cli(['approve', p.requestId])
    expect(approved).toEqual({ code: 0, out: `approved ${p.requestId}\n` })
    expect((await blocked).status).toBe(200)
    expect((await cli(['deny', p.requestId])).code).toBe(1)
  })

  it('an allowed intent needs no approval: 200, approvalRequired false, no token', async () => {
    const intent = nativeIntent('0')
    const res = await stack.post('/v1/tx/approve-request', intent)
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ approved: true, approvalRequired: false, policyDecision: { decision: 'allow' } })
    expect(res.body.approvalTokenId).toBeUndefined()
  })

  it('a client that disconnects while waiting does not withdraw its request: it stays on the dashboard', async () => {
    const intent = nativeIntent()
    const ac = new AbortController()
    const blocked = fetch(`${stack.url}/v1/tx/approve-request`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(intent), signal: ac.signal }).catch(() => 'aborted')
    const p = await pendingFor(stack, intent)
    ac.abort()
    expect(await blocked).toBe('aborted')
    await new Promise((r) => setTimeout(r, 500))
    expect((await stack.get('/v1/approvals/pending')).body.pending.some((x: { requestId: string }) => x.requestId === p.requestId)).toBe(true)
    const history = (await stack.get('/v1/approvals/history?limit=20')).body.events
    expect(history.some((e: { event: string; intentId: string }) => e.event === 'approval_withdrawn' && e.intentId === intent.id)).toBe(false)
    expect((await stack.decide(p.requestId, false)).status).toBe(200)
  })

  it('the WebSocket feed, through the gateway, pushes a new request and its decision without polling (after the operator token)', async () => {
    const ws = new WebSocket(`ws://127.0.0.1:${stack.port}/v1/approvals/ws`)
    const messages: Array<{ type: string; request?: { requestId: string; summary: { intentId: string } }; events?: Array<{ event: string }> }> = []
    ws.on('message', (m) => messages.push(JSON.parse(m.toString())))
    await new Promise((r, j) => {
      ws.once('open', r)
      ws.once('error', j)
    })
    ws.send(JSON.stringify({ type: 'auth', token: stack.operatorToken }))
    await waitFor(() => messages.find((m) => m.type === 'pending') ?? null, { what: 'the pending snapshot after auth' })
    const intent = nativeIntent()
    const blocked = stack.post('/v1/tx/approve-request', intent)
    const pushed = await waitFor(() => messages.find((m) => m.type === 'request' && m.request!.summary.intentId === intent.id) ?? null, { what: 'a pushed request' })
    const requestId = pushed.request!.requestId
    await stack.decide(requestId, true)
    expect((await blocked).status).toBe(200)
    await waitFor(() => messages.some((m) => m.type === 'audit' && m.events!.some((e) => e.event === 'web_approval_decided')) || null, { what: 'a pushed audit event' })
    ws.close()
  })

  it('a feed handshake that succeeds through the gateway carries the version and nosniff headers', async () => {
    const s = net.connect(stack.port, '127.0.0.1')
    await once(s, 'connect')
    s.write(`GET /v1/approvals/ws HTTP/1.1\r\nHost: 127.0.0.1:${stack.port}\r\nOrigin: http://127.0.0.1:${stack.port}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`)
    let raw = ''
    s.on('data', (d) => (raw += d))
    await waitFor(() => raw.includes('\r\n\r\n') || null, { what: 'the handshake answer' })
    s.destroy()
    const head = raw.split('\r\n\r\n')[0]!
    expect(head.split('\r\n')[0]).toBe('HTTP/1.1 101 Switching Protocols')
    expect(head).toMatch(/\r\nx-service-version: 0\.1\.0(\r\n|$)/i)
    expect(head).toMatch(/\r\nx-content-type-options: nosniff(\r\n|$)/i)
  })

  it("a feed handshake the approver's WebSocket server refuses comes back through the gateway as a 400 in the spec's shape", async () => {
    const s = net.connect(stack.port, '127.0.0.1')
    await once(s, 'connect')
    s.write('GET /v1/approvals/ws HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n\r\n')
    let raw = ''
    s.on('data', (d) => (raw += d))
    await once(s, 'close')
    const [head, body] = raw.split('\r\n\r\n') as [string, string]
    expect(head.split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request')
    expect(head).toMatch(/\r\nx-service-version: /i)
    expect(JSON.parse(body)).toEqual({ statusCode: 400, error: 'Bad Request', message: 'the WebSocket handshake is not valid: Missing or invalid Sec-WebSocket-Key header' })
  })
})

describe('while the approver is down', () => {
  it("the gateway forwards nothing to whatever took the approver's TCP port: operator tokens go only to the approver's own socket", async () => {
    const stack = new Stack({ rpcUrls: { 8453: anvil.rpcUrl }, policy: { maxTxPerHour: 1000 } })
    await importKey(stack.dataDir, owner.privateKey)
    await stack.start({ approver: true })
    const seen: string[] = []
    const squatter = http.createServer((req, res) => {
      seen.push(`${req.method} ${req.url} ${req.headers.authorization ?? ''}`)
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"pending":[]}')
    })
    const feed = new WebSocketServer({ server: squatter })
    feed.on('connection', (ws) => ws.on('message', (m) => seen.push(`ws ${m.toString()}`)))
    try {
      // The approver stops (a crash, an upgrade); another local process binds its port at once.
      await stack.approver!.stop()
      squatter.listen(stack.approverPort, '127.0.0.1')
      await once(squatter, 'listening')
      const token = stack.operatorToken
      const pending = await fetch(`${stack.url}/v1/approvals/pending`, { headers: { authorization: `Bearer ${token}` } })
      expect(pending.status).toBe(503)
      expect(await pending.json()).toEqual({ error: 'approver_unavailable', message: 'the approver is not reachable' })
      expect((await stack.decide(randomUUID(), true)).status).toBe(503)
      const ws = new WebSocket(`ws://127.0.0.1:${stack.port}/v1/approvals/ws`)
      ws.on('error', () => undefined) // the refused handshake, and terminate() before an open, are reported as errors too
      const refused = await new Promise<number>((resolve) => {
        ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0))
        ws.once('open', () => {
          ws.send(JSON.stringify({ type: 'auth', token }))
          resolve(101)
        })
      })
      ws.terminate()
      expect(refused).toBe(503)
      await new Promise((r) => setTimeout(r, 200))
      expect(seen).toEqual([])
      // The approver back: the same routes work through the gateway again.
      squatter.closeAllConnections()
      await new Promise((r) => squatter.close(r))
      stack.approverPort = 0
      await stack.startApprover()
      expect((await stack.get('/v1/approvals/pending')).status).toBe(200)
    } finally {
      feed.close()
      squatter.closeAllConnections()
      squatter.close()
      await stack.stop()
    }
  })
})

describe('auto mode', () => {
  it('approves at once and the transaction is mined; SERVICE_SERVER_TIMING=on says where each response’s time went', async () => {
    const stack = new Stack({ rpcUrls: { 8453: anvil.rpcUrl }, policy: { maxTxPerHour: 1000 }, env: { SERVICE_APPROVAL_MODE: 'auto', SERVICE_SERVER_TIMING: 'on' } })
    await importKey(stack.dataDir, anvilAccounts[1].privateKey)
    try {
      await stack.start({ approver: true })
      expect(stack.approver!.output()).toMatch(/APPROVED WITHOUT A HUMAN/)
      const intent = nativeIntent(parseEther('0.1').toString(), { wallet: { address: anvilAccounts[1].address as Address } })
      const res = await stack.postWithHeaders('/v1/tx/approve-request', intent)
      expect(res.body).toMatchObject({ approved: true, approvalRequired: true })
      const sent = await stack.postWithHeaders('/v1/tx/sign-and-send', { intent, approvalTokenId: res.body.approvalTokenId })
      expect(sent.status).toBe(200)
      expect((await receiptOf(stack, sent.body.txHash)).status).toBe('success')
      // Every phase of each route, in order, each a duration in ms; the phases add up to the total.
      const phasesOf = (header: string | null) => (header ?? '').split(', ').map((m) => { const [name, dur] = m.split(';dur='); return { name, ms: Number(dur) } })
      const approvePhases = phasesOf(res.headers.get('server-timing'))
      expect(approvePhases.map((p) => p.name)).toEqual(['wallet-check', 'build', 'preflight', 'audit', 'token-facts', 'approval', 'audit-built', 'total'])
      const signPhases = phasesOf(sent.headers.get('server-timing'))
      expect(signPhases.map((p) => p.name)).toEqual(['build', 'risk', 'wallet-queue', 'chain', 'audit', 'signer', 'broadcast', 'audit-broadcast', 'total'])
      for (const phases of [approvePhases, signPhases]) {
        for (const p of phases) expect(p.ms, p.name).toBeGreaterThanOrEqual(0)
        const sum = phases.slice(0, -1).reduce((s, p) => s + p.ms, 0)
        expect(sum).toBeLessThanOrEqual(phases.at(-1)!.ms + 0.01 * phases.length)
        expect(phases.find((p) => p.name === 'approval' || p.name === 'signer')!.ms).toBeGreaterThan(0)
      }
      // The request and its approval are one commit in the approver, still in that order and in the hash chain.
      const rows = (await stack.get('/v1/approvals/history?limit=50')).body.events.filter((e: { intentId: string }) => e.intentId === intent.id).reverse()
      expect(rows.map((e: { event: string }) => e.event)).toEqual(['preflight_completed', 'policy_evaluated', 'approve_request_created', 'approval_requested', 'approval_granted', 'tx_built', 'policy_evaluated', 'signature_created', 'tx_broadcast'])
      expect(rows[4].data).toMatchObject({ requestId: rows[3].data.requestId, tokenId: res.body.approvalTokenId, via: 'auto' })
      expect(await stack.auditVerify()).toMatch(/^audit chain OK: \d+ events/)
    } finally {
      await stack.stop()
    }
  })

  it('with the signer down, approve-request answers 503 signer_unavailable at once (nobody would decide a pending request); with the signer back, the same intent is approved and mined', async () => {
    const stack = new Stack({ rpcUrls: { 8453: anvil.rpcUrl }, policy: { maxTxPerHour: 1000 }, env: { SERVICE_APPROVAL_MODE: 'auto' } })
    await importKey(stack.dataDir, anvilAccounts[2].privateKey)
    try {
      await stack.start({ approver: true })
      const wallet = { address: anvilAccounts[2].address as Address }
      // The gateway learns the signer's wallets (an allowed intent needs no approval): it still asks the approver about them while the signer is away.
      expect((await stack.post('/v1/tx/approve-request', nativeIntent('0', { wallet }))).body).toMatchObject({ approved: true, approvalRequired: false })
      await stack.signer.stop()
      // A wallet the signer never listed cannot be told apart from a made-up one now: refused by the gateway, nothing asked.
      const unknown = await stack.post('/v1/tx/approve-request', nativeIntent(parseEther('0.1').toString(), { wallet: { address: '0x000000000000000000000000000000000000dEaD' } }))
      expect(unknown).toMatchObject({ status: 503, body: { error: 'signer_unavailable', message: expect.stringContaining('the signer could not be asked whether it holds a key') } })
      const intent = nativeIntent(parseEther('0.1').toString(), { wallet })
      const started = Date.now()
      const refused = await stack.post('/v1/tx/approve-request', intent)
      expect(Date.now() - started).toBeLessThan(10_000)
      expect(refused).toMatchObject({ status: 503, body: { error: 'signer_unavailable', message: expect.stringContaining('the signer could not issue an approval token') } })
      expect((await stack.get('/v1/approvals/pending')).body.pending).toEqual([])
      await stack.startSigner()
      const approved = await stack.post('/v1/tx/approve-request', intent)
      expect(approved.body).toMatchObject({ approved: true, approvalRequired: true })
      const sent = await stack.post('/v1/tx/sign-and-send', { intent, approvalTokenId: approved.body.approvalTokenId })
      expect(sent.status).toBe(200)
      expect((await receiptOf(stack, sent.body.txHash)).status).toBe('success')
      expect(await stack.auditVerify()).toMatch(/^audit chain OK: \d+ events/)
    } finally {
      await stack.stop()
    }
  })

  it("holds SERVICE_MAX_CONNECTIONS connections at once on its own port, as the gateway does (it had 1024 whatever the gateway's)", async () => {
    const stack = new Stack({})
    try {
      await stack.startSigner()
      await stack.startApprover({ SERVICE_MAX_CONNECTIONS: '16' })
      // Sixteen that have sent nothing yet, none of them a second old: nothing can be let go to make room.
      const held = await Promise.all(Array.from({ length: 16 }, () => openSilentConnection(stack.approverPort)))
      try {
        const refused = await rawExchange(stack.approverPort, 'GET /approval-ui HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
        expect(refused.answers[0]?.statusLine).toMatch(/^HTTP\/1\.1 503 /)
        expect(JSON.parse(refused.answers[0]!.body)).toMatchObject({ error: 'too_many_connections' })
      } finally {
        for (const socket of held) socket.destroy()
      }
    } finally {
      await stack.stop()
    }
  })

  it('refuses to start with a non-local RPC URL unless explicitly allowed', async () => {
    const stack = new Stack({})
    const refused = spawnService('approver-auto-remote', entries.approver, { ...stack.env, SERVICE_APPROVAL_MODE: 'auto', SERVICE_RPC_URL_1: 'https://mainnet.example.org', SERVICE_APPROVER_PORT: String(await freePort()) })
    expect(await refused.exited()).toBe(1)
    expect(refused.output()).toContain('refusing with a non-local RPC URL (SERVICE_RPC_URL_1)')
  })
})

describe('cli mode on a real terminal', () => {
  it('asks on the approver’s terminal and takes y and n', async () => {
    const stack = new Stack({ rpcUrls: { 8453: anvil.rpcUrl }, policy: { maxTxPerHour: 1000 } })
    await importKey(stack.dataDir, anvilAccounts[2].privateKey)
    const terminal = await startWithTerminalApprover(stack, { SERVICE_APPROVAL_MODE: 'cli' })
    const screen = terminal.screen
    try {
      const wallet = { address: anvilAccounts[2].address as Address }
      const yes = nativeIntent(parseEther('0.2').toString(), { wallet })
      const first = stack.post('/v1/tx/approve-request', yes)
      await waitFor(() => (screen().includes('approve? [y/n]') ? true : null), { what: 'the prompt on the terminal' })
      expect(screen()).toContain('Transfer 0.2 ETH (native)')
      terminal.press('y', 'Enter')
      const approved = await first
      expect(approved.status).toBe(200)
      expect(approved.body.approvalTokenId).toMatch(/^[0-9a-f-]{36}$/)

      const no = nativeIntent(parseEther('0.3').toString(), { wallet })
      const second = stack.post('/v1/tx/approve-request', no)
      // Answered once its question is asked: what is typed while a new card settles is thrown away.
      await waitFor(() => (screen().includes('Transfer 0.3 ETH') && screen().split('approve? [y/n]').length - 1 >= 2 ? true : null), { what: 'the second prompt' })
      terminal.press('n', 'Enter')
      const denied = await second
      expect(denied.status).toBe(403)
      expect(denied.body.reason).toBe('user_declined')
      const via = (await stack.get('/v1/approvals/history?limit=30')).body.events.filter((e: { event: string }) => e.event === 'web_approval_decided')
      expect(via.slice(0, 2).map((e: { data: { via: string; approved: boolean } }) => [e.data.via, e.data.approved])).toEqual([
        ['terminal', false],
        ['terminal', true],
      ])
    } finally {
      terminal.close()
      await stack.stop()
    }
  })

  it('an answer the signer could not carry out says so on the terminal (not "approved") and is asked again; once the signer is back, yes approves it', async () => {
    const stack = new Stack({ rpcUrls: { 8453: anvil.rpcUrl }, policy: { maxTxPerHour: 1000 } })
    await importKey(stack.dataDir, anvilAccounts[2].privateKey)
    const terminal = await startWithTerminalApprover(stack, { SERVICE_APPROVAL_MODE: 'cli' })
    // tmux wraps long lines at the terminal's width: joined again here.
    const screen = () => terminal.screen().replace(/\n/g, '')
    const questions = () => screen().split('approve? [y/n]').length - 1
    const approvedLines = () => terminal.screen().split('\n').filter((line) => line.trim() === 'approved').length
    try {
      const intent = nativeIntent(parseEther('0.4').toString(), { wallet: { address: anvilAccounts[2].address as Address } })
      const asked = stack.post('/v1/tx/approve-request', intent)
      await waitFor(() => (questions() === 1 ? true : null), { what: 'the prompt on the terminal' })
      await stack.signer.stop()
      terminal.press('y', 'Enter')
      await waitFor(() => (questions() === 2 ? true : null), { what: 'the same request asked again', timeoutMs: 20_000 })
      // Before: "approved" was printed at once, the request went back on the list, and the terminal never asked again.
      expect(screen()).toContain('approval not carried out: the signer could not issue a token')
      expect(approvedLines()).toBe(0)
      expect(screen().split('Transfer 0.4 ETH (native)').length - 1).toBeGreaterThanOrEqual(2)
      expect((await stack.get('/v1/approvals/pending')).body.pending).toHaveLength(1)
      await stack.startSigner()
      terminal.press('y', 'Enter')
      const approved = await asked
      expect(approved.status, JSON.stringify(approved.body)).toBe(200)
      expect(approved.body).toMatchObject({ approved: true, approvalTokenId: expect.stringMatching(/^[0-9a-f-]{36}$/) })
      await waitFor(() => (approvedLines() === 1 ? true : null), { what: '"approved" on the terminal' })
    } finally {
      terminal.close()
      await stack.stop()
    }
  })
})
