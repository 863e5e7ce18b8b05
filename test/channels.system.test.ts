// Issue 16 item 1, several approval channels at once, end to end: the real
// approver runs in a real terminal (tmux) with SERVICE_APPROVAL_CHANNELS=web,cli
// beside the real signer and gateway on anvil. A request is asked on the
// terminal and shown on the dashboard feed at the same time; whichever answers
// first wins and the other stops showing it.
import { createHash, randomBytes } from 'node:crypto'
import { chmodSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseEther, type Address } from 'viem'
import WebSocket from 'ws'
import { anvilAccounts, startAnvil, type Anvil } from './support/anvil.js'
import { waitFor } from './support/processes.js'
import { importKey, Stack } from './support/stack.js'
import { nativeIntent } from './support/intents.js'
import { startWithTerminalApprover } from './support/terminalApprover.js'

let anvil: Anvil
beforeAll(async () => {
  anvil = await startAnvil({ chainId: 8453 })
})
afterAll(async () => {
  await anvil?.stop()
})

interface FeedMessage {
  type: string
  requestId?: string
  end?: string
  request?: { requestId: string; summary: { intentId: string } }
}

describe('web and cli channels at once', () => {
  it('approving on the dashboard clears the terminal prompt, and answering on the terminal ends the dashboard card', async () => {
    const stack = new Stack({ rpcUrls: { 8453: anvil.rpcUrl }, policy: { maxTxPerHour: 1000 } })
    await importKey(stack.dataDir, anvilAccounts[3].privateKey)
    const terminal = await startWithTerminalApprover(stack, { SERVICE_APPROVAL_CHANNELS: 'web,cli' })
    const screen = terminal.screen
    let ws: WebSocket | undefined
    try {
      expect(screen()).toContain('channels web,cli')
      const wallet = { address: anvilAccounts[3].address as Address }

      // The dashboard's live feed, authenticated like the page does it.
      ws = new WebSocket(`ws://127.0.0.1:${stack.port}/v1/approvals/ws`)
      const feed: FeedMessage[] = []
      ws.on('message', (m) => feed.push(JSON.parse(m.toString()) as FeedMessage))
      await new Promise((r, j) => {
        ws!.once('open', r)
        ws!.once('error', j)
      })
      ws.send(JSON.stringify({ type: 'auth', token: stack.operatorToken }))
      await waitFor(() => feed.find((m) => m.type === 'pending') ?? null, { what: 'the pending snapshot' })

      // 1. Shown on both; approved on the dashboard (decide): the terminal prompt is withdrawn.
      const first = nativeIntent(parseEther('0.21').toString(), { wallet })
      const firstCall = stack.post('/v1/tx/approve-request', first)
      await waitFor(() => (screen().includes('Transfer 0.21 ETH') && screen().includes('approve? [y/n]') ? true : null), { what: 'the first prompt on the terminal' })
      const shown = await waitFor(() => feed.find((m) => m.type === 'request' && m.request!.summary.intentId === first.id) ?? null, { what: 'the first card on the dashboard feed' })
      const firstId = shown.request!.requestId
      expect(await stack.decide(firstId, true)).toEqual({ status: 200, body: { decided: true, requestId: firstId, approved: true } })
      expect((await firstCall).body.approved).toBe(true)
      await waitFor(() => (screen().includes('(decided elsewhere or expired)') ? true : null), { what: 'the terminal prompt to clear' })
      expect(feed).toContainEqual({ type: 'ended', requestId: firstId, end: 'approved' })

      // 2. Answered on the terminal: the dashboard card ends, and the dashboard can no longer decide it.
      const second = nativeIntent(parseEther('0.22').toString(), { wallet })
      const secondCall = stack.post('/v1/tx/approve-request', second)
      const shown2 = await waitFor(() => feed.find((m) => m.type === 'request' && m.request!.summary.intentId === second.id) ?? null, { what: 'the second card on the dashboard feed' })
      const secondId = shown2.request!.requestId
      // Answered once its question is asked: what is typed while a new card settles is thrown away.
      await waitFor(() => (screen().includes('Transfer 0.22 ETH') && screen().split('approve? [y/n]').length - 1 >= 2 ? true : null), { what: 'the second prompt on the terminal' })
      terminal.press('n', 'Enter')
      const denied = await secondCall
      expect(denied.status).toBe(403)
      expect(denied.body.reason).toBe('user_declined')
      await waitFor(() => feed.find((m) => m.type === 'ended' && m.requestId === secondId) ?? null, { what: 'the dashboard card to end' })
      expect(feed).toContainEqual({ type: 'ended', requestId: secondId, end: 'denied' })
      expect((await stack.get('/v1/approvals/pending')).body.pending).toEqual([])
      expect((await stack.decide(secondId, true)).status).toBe(404)

      // One decision each, by the channel that answered first.
      const decided = (await stack.get('/v1/approvals/history?limit=40')).body.events.filter((e: { event: string }) => e.event === 'web_approval_decided')
      expect(decided.slice(0, 2).map((e: { data: { requestId: string; via: string; approved: boolean } }) => [e.data.requestId, e.data.via, e.data.approved])).toEqual([
        [secondId, 'terminal', false],
        [firstId, 'web', true],
      ])
      const requested = (await stack.get('/v1/approvals/history?limit=40')).body.events.find((e: { event: string; intentId: string }) => e.event === 'approval_requested' && e.intentId === first.id)
      expect(requested.data.mode).toBe('web,cli')
    } finally {
      ws?.close()
      terminal.close()
      await stack.stop()
    }
  }, 90_000)
})

describe('a quorum request on the approver terminal', () => {
  it('the terminal shows the quorum, cannot approve it (it knows no name), and its denial ends it after a named approval', async () => {
    const ALICE = randomBytes(32).toString('base64url')
    const BOB = randomBytes(32).toString('base64url')
    const sha256 = (t: string) => createHash('sha256').update(t).digest('hex')
    const stack = new Stack({ rpcUrls: { 8453: anvil.rpcUrl }, policy: { maxTxPerHour: 1000, requireQuorumAbove: { valueWei: parseEther('1').toString(), approvals: 2 } } })
    await importKey(stack.dataDir, anvilAccounts[1].privateKey)
    const operatorsFile = path.join(stack.dataDir, 'operators.json')
    writeFileSync(operatorsFile, JSON.stringify({ operators: [{ name: 'alice', tokenSha256: sha256(ALICE) }, { name: 'bob', tokenSha256: sha256(BOB) }] }))
    chmodSync(operatorsFile, 0o600)
    const terminal = await startWithTerminalApprover(stack, { SERVICE_APPROVAL_CHANNELS: 'web,cli', SERVICE_OPERATORS_FILE: operatorsFile }, 220)
    const screen = terminal.screen
    try {
      const wallet = { address: anvilAccounts[1].address as Address }
      const intent = nativeIntent(parseEther('1.5').toString(), { wallet })
      const call = stack.post('/v1/tx/approve-request', intent)
      await waitFor(() => (screen().includes('needs 2 named operators') ? true : null), { what: 'the quorum prompt on the terminal' })
      expect(screen()).toMatch(/Quorum +0 of 2 approvals; 2 more needed/)
      expect(screen()).not.toContain('approve? [y/n]')
      const id = (await stack.get('/v1/approvals/pending')).body.pending[0].requestId as string

      // "y" is not an approval here; the request stays pending.
      terminal.press('y', 'Enter')
      await waitFor(() => (screen().includes('only named operators can approve this request') ? true : null), { what: 'the refusal of y' })
      expect((await stack.decide(id, true, ALICE)).body).toMatchObject({ decided: false, operator: 'alice', quorum: { approvals: 1, required: 2 } })

      // A denial on the terminal ends it, alice's approval notwithstanding.
      terminal.press('n', 'Enter')
      const denied = await call
      expect(denied.status).toBe(403)
      expect(denied.body.reason).toBe('user_declined')
      expect((await stack.decide(id, true, BOB)).status).toBe(404)
      const events = (await stack.get('/v1/approvals/history?limit=40')).body.events.filter((e: { intentId: string }) => e.intentId === intent.id).reverse()
      expect(events.filter((e: { event: string }) => e.event === 'approval_vote').map((e: { data: Record<string, unknown> }) => [e.data.operator ?? null, e.data.via, e.data.approved])).toEqual([
        ['alice', 'web', true],
        [null, 'terminal', false],
      ])
      expect(events.find((e: { event: string }) => e.event === 'approval_rejected').data).toMatchObject({ via: 'terminal', reason: 'user_declined' })
    } finally {
      terminal.close()
      await stack.stop()
    }
  }, 90_000)
})
