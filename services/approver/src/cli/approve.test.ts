// countersign-approve against a real approver HTTP app (in-process, a real
// port): watch follows the authenticated WebSocket feed and decides with the
// operator token; a wrong token is refused by the feed.
import { randomUUID } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { PassThrough } from 'node:stream'
import { afterEach, describe, expect, it } from 'vitest'
import { defaultRouterTable, noPreflight, openAuditLog, type AuditLog } from '@countersign/shared'
import { actions, makeIntent } from '@countersign/shared/testing/intents'
import { createApprovalService } from '../approvalService.js'
import { webChannel } from '../channels/webChannel.js'
import { buildApproverApp } from '../http/app.js'
import { PendingRequests } from '../requests/pendingRequests.js'
import { runApproveCli } from './approve.js'

const TOKEN = 'operator-secret-operator-secret-5678'
let audit: AuditLog | undefined
const closers: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const c of closers.splice(0)) await c()
  await audit?.close()
})

async function approver() {
  audit = openAuditLog(path.join(mkdtempSync(path.join(os.tmpdir(), 'cs-approve-cli-')), 'audit.db'))
  const pending = new PendingRequests(Date.now, { ttlMs: 300_000, perWallet: 5, total: 500 })
  const service = createApprovalService({ mode: 'web', pending, granter: { grant: async () => ({ approvalTokenId: randomUUID(), expiresAt: Date.now() + 300_000 }) }, audit, routers: defaultRouterTable(), clock: Date.now })
  const web = webChannel(Date.now)
  service.addChannel(web)
  const http = await buildApproverApp({ host: '127.0.0.1', service, web, audit, clock: Date.now, operatorToken: TOKEN })
  await http.listen({ host: '127.0.0.1', port: 0 })
  closers.push(() => http.close())
  const url = `http://127.0.0.1:${(http.server.address() as { port: number }).port}`
  const ask = () => service.requestApproval({ intent: makeIntent({ action: actions.native('1000000000000000000') }), preflight: noPreflight(), policyReasons: ['above threshold'] })
  return { url, service, ask }
}

const until = async (check: () => boolean, what: string) => {
  for (let i = 0; i < 300; i++) {
    if (check()) return
    await new Promise((r) => setTimeout(r, 10))
  }
  throw new Error(`timed out waiting for ${what}`)
}

describe('countersign-approve watch', () => {
  it('shows the card of a new request from the feed and approves it with "a 1"', async () => {
    const a = await approver()
    const out: string[] = []
    const err: string[] = []
    const input = new PassThrough()
    const done = runApproveCli(['watch', '--url', a.url], { out: (s) => out.push(s), err: (s) => err.push(s), env: { SERVICE_OPERATOR_TOKEN: TOKEN }, input })
    await until(() => out.some((o) => o.includes('no pending requests')), 'the snapshot after auth')
    const t = await a.ask()
    await until(() => out.some((o) => o.includes('[1] Transfer 1 ETH (native)')), 'the pushed card')
    const shown = out.length
    expect(out.at(-1)).toContain(t.state === 'pending' ? t.requestId : 'x')
    input.write('a 1\n')
    await until(() => out.some((o) => o.startsWith('approved ')), 'the decision')
    expect(a.service.pending.list()).toEqual([])
    await until(() => out.slice(shown).some((o) => o.includes('no pending requests')), 'the ended request to leave the list')
    input.end('q\n')
    expect(await done).toBe(0)
    expect(err).toEqual([])
  })

  it('a wrong operator token: the feed refuses it and the command fails', async () => {
    const a = await approver()
    const err: string[] = []
    const code = await runApproveCli(['watch', '--url', a.url], { out: () => {}, err: (s) => err.push(s), env: { SERVICE_OPERATOR_TOKEN: 'not-the-token' }, input: new PassThrough() })
    expect(code).toBe(1)
    expect(err.join('\n')).toContain('operator token was refused')
  })
})
