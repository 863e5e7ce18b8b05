// Issue 16 item 3 (named operators): the real approver with
// SERVICE_OPERATORS_FILE beside the real signer and gateway on anvil. Each
// operator decides with their own token; the audit log and the webhook-facing
// decision record the operator's name, never the token; the single
// operator-token file is not created.
import { createHash, randomBytes } from 'node:crypto'
import { chmodSync, existsSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { anvilAccounts, startAnvil, type Anvil } from './support/anvil.js'
import { waitFor } from './support/processes.js'
import { importKey, Stack } from './support/stack.js'
import { nativeIntent } from './support/intents.js'

const ALICE = randomBytes(32).toString('base64url')
const BOB = randomBytes(32).toString('base64url')
const sha256 = (t: string) => createHash('sha256').update(t).digest('hex')

let anvil: Anvil
let stack: Stack
beforeAll(async () => {
  anvil = await startAnvil({ chainId: 8453 })
  stack = new Stack({ rpcUrls: { 8453: anvil.rpcUrl }, policy: { maxTxPerHour: 1000 } })
  await importKey(stack.dataDir, anvilAccounts[4].privateKey)
  const file = path.join(stack.dataDir, 'operators.json')
  writeFileSync(file, JSON.stringify({ operators: [{ name: 'alice', tokenSha256: sha256(ALICE) }, { name: 'bob', tokenSha256: sha256(BOB) }] }))
  chmodSync(file, 0o600)
  await stack.start({ approver: true, approverEnv: { SERVICE_OPERATORS_FILE: file } })
})
afterAll(async () => {
  await stack?.stop()
  await anvil?.stop()
})

const wallet = { address: anvilAccounts[4].address as `0x${string}` }

async function pendingOf(intentId: string): Promise<string> {
  const p = await waitFor(async () => (await stack.get('/v1/approvals/pending')).body.pending.find((x: { summary: { intentId: string } }) => x.summary.intentId === intentId) ?? null, { what: 'the pending request' })
  return p.requestId as string
}

describe('named operators', () => {
  it('each operator decides with their own token, recorded by name; other tokens are refused', async () => {
    expect(existsSync(path.join(stack.dataDir, 'operator-token'))).toBe(false)
    expect(stack.approver!.output()).toContain('per operator (2 in')

    const first = nativeIntent(undefined, { wallet })
    const firstCall = stack.post('/v1/tx/approve-request', first)
    const firstId = await pendingOf(first.id)
    expect((await stack.decide(firstId, true, randomBytes(32).toString('base64url'))).status).toBe(401)
    expect((await stack.decide(firstId, true, sha256(ALICE))).status).toBe(401)
    expect((await stack.decide(firstId, true, ALICE)).status).toBe(200)
    expect((await firstCall).body.approved).toBe(true)

    const second = nativeIntent(undefined, { wallet })
    const secondCall = stack.post('/v1/tx/approve-request', second)
    const secondId = await pendingOf(second.id)
    expect((await stack.decide(secondId, false, BOB)).status).toBe(200)
    expect((await secondCall).status).toBe(403)

    const events = (await stack.get('/v1/approvals/history?limit=50')).body.events as Array<{ event: string; intentId: string; data: Record<string, unknown> }>
    const byIntent = (id: string, name: string) => events.find((e) => e.intentId === id && e.event === name)!.data
    expect(byIntent(first.id, 'web_approval_decided')).toMatchObject({ requestId: firstId, approved: true, operator: 'alice' })
    expect(byIntent(first.id, 'approval_granted')).toMatchObject({ operator: 'alice' })
    expect(byIntent(second.id, 'web_approval_decided')).toMatchObject({ requestId: secondId, approved: false, operator: 'bob' })
    expect(byIntent(second.id, 'approval_rejected')).toMatchObject({ operator: 'bob' })
    const all = JSON.stringify(events)
    expect(all).not.toContain(ALICE)
    expect(all).not.toContain(BOB)
  }, 60_000)

  it('the dashboard feed accepts any named operator’s token and refuses others', async () => {
    const open = async (token: string) => {
      const ws = new WebSocket(`ws://127.0.0.1:${stack.port}/v1/approvals/ws`)
      const got: Array<{ type: string }> = []
      const closed = new Promise<number>((r) => ws.once('close', (code) => r(code)))
      ws.on('message', (m) => got.push(JSON.parse(m.toString())))
      await new Promise((r, j) => {
        ws.once('open', r)
        ws.once('error', j)
      })
      ws.send(JSON.stringify({ type: 'auth', token }))
      return { ws, got, closed }
    }
    const bob = await open(BOB)
    await waitFor(() => bob.got.find((m) => m.type === 'pending') ?? null, { what: 'the pending snapshot for bob' })
    bob.ws.close()
    const stranger = await open(randomBytes(32).toString('base64url'))
    expect(await stranger.closed).toBe(4401)
    expect(stranger.got).toEqual([])
  })
})
