// countersign-approve against a real approver HTTP app (in-process, a real
// port): watch follows the authenticated WebSocket feed and decides with the
// operator token; a wrong token is refused by the feed.
import { randomUUID } from 'node:crypto'
import { mkdirSync, mkdtempSync } from 'node:fs'
import { once } from 'node:events'
import os from 'node:os'
import path from 'node:path'
import { PassThrough } from 'node:stream'
import { afterEach, describe, expect, it } from 'vitest'
import { WebSocketServer } from 'ws'
import { createServer } from 'node:http'
import { defaultRouterTable, noPreflight, openAuditLog, type AuditLog } from '@countersign/shared'
import { actions, makeIntent } from '@countersign/shared/testing/intents'
import { createApprovalService } from '../approvalService.js'
import { webChannel } from '../channels/webChannel.js'
import { buildApproverApp } from '../http/app.js'
import { createHash } from 'node:crypto'
import { namedOperators } from '../operators/operators.js'
import { PendingRequests } from '../requests/pendingRequests.js'
import { decisionText, runApproveCli } from './approve.js'

const TOKEN = 'operator-secret-operator-secret-5678'
let audit: AuditLog | undefined
const closers: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const c of closers.splice(0)) await c()
  await audit?.close()
})

const ALICE = 'alice-token-alice-token-alice-token-1'
const BOB = 'bob-token-bob-token-bob-token-bob-22'
const sha = (t: string) => createHash('sha256').update(t).digest('hex')

/** `quorum`: named operators alice and bob, and every request needs both. */
async function approver(opts: { quorum?: boolean } = {}) {
  audit = openAuditLog(path.join(mkdtempSync(path.join(os.tmpdir(), 'cs-approve-cli-')), 'audit.db'))
  const pending = new PendingRequests(Date.now, { ttlMs: 300_000, perWallet: 5, total: 500 })
  const service = createApprovalService({
    mode: 'web',
    pending,
    granter: { grant: async () => ({ approvalTokenId: randomUUID(), expiresAt: Date.now() + 300_000 }), durable: async () => undefined },
    audit,
    routers: defaultRouterTable(),
    clock: Date.now,
    ...(opts.quorum ? { quorumFor: () => 2, namedOperators: 2 } : {}),
  })
  const web = webChannel(Date.now)
  service.addChannel(web)
  const operators = opts.quorum ? namedOperators([{ name: 'alice', tokenSha256: sha(ALICE) }, { name: 'bob', tokenSha256: sha(BOB) }]) : null
  const http = await buildApproverApp({ host: '127.0.0.1', service, web, audit, clock: Date.now, operatorToken: opts.quorum ? null : TOKEN, operators })
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

  it('"a 2" typed for the request shown as [2] decides that request when [1] expires before the line is read; [1] then decides nothing (security review: renumbering)', async () => {
    let now = Date.now()
    const clock = () => now
    audit = openAuditLog(path.join(mkdtempSync(path.join(os.tmpdir(), 'cs-approve-cli-')), 'audit.db'))
    const pending = new PendingRequests(clock, { ttlMs: 300_000, perWallet: 5, total: 500 })
    const granted: string[] = []
    const service = createApprovalService({
      mode: 'web', pending, audit, routers: defaultRouterTable(), clock,
      granter: { grant: async (b) => { granted.push(b.intentId); return { approvalTokenId: randomUUID(), expiresAt: now + 300_000 } }, durable: async () => undefined },
    })
    const web = webChannel(clock)
    service.addChannel(web)
    const http = await buildApproverApp({ host: '127.0.0.1', service, web, audit, clock, operatorToken: TOKEN })
    await http.listen({ host: '127.0.0.1', port: 0 })
    closers.push(() => http.close())
    const url = `http://127.0.0.1:${(http.server.address() as { port: number }).port}`
    const ask = async (wei: string) => {
      const intent = makeIntent({ action: actions.native(wei) })
      await service.requestApproval({ intent, preflight: noPreflight(), policyReasons: ['x'] })
      return intent.id
    }
    // The agent's own request A, about to expire; the operator's B (1 ETH); the agent's C (50 ETH).
    await ask('1000000000000000')
    now += 10_000
    const b = await ask('1000000000000000000')
    const c = await ask('50000000000000000000')

    const out: string[] = []
    const err: string[] = []
    const input = new PassThrough()
    const done = runApproveCli(['watch', '--url', url], { out: (s) => out.push(s), err: (s) => err.push(s), env: { SERVICE_OPERATOR_TOKEN: TOKEN }, input })
    await until(() => out.some((o) => o.includes('[2] Transfer 1 ETH (native)') && o.includes('[3] Transfer 50 ETH')), 'the list the operator reads')
    const listed = out.length

    // While the operator types "a 2" for the 1 ETH request, A reaches its 300 s and is swept.
    now += 290_001
    await service.sweep()
    await until(() => out.slice(listed).some((o) => o.includes('Transfer 50 ETH')), 'the list printed after A ended')
    input.write('a 2\n')
    await until(() => out.some((o) => o.startsWith('approved ')) || err.length > 0, 'the decision')
    // The operator meant B; before, C (50 ETH, then at position 2) was approved.
    expect(granted, `b=${b} c=${c}`).toEqual([b])

    // What the operator read: A's number now says it ended, B and C kept theirs, and how numbering works.
    const after = out.slice(listed).find((o) => o.includes('Transfer 50 ETH'))!
    expect(after).toMatch(/^\[1\] ended \(expired\): Transfer 0\.001 ETH \(native\) to 0x2+ on Base; \[1\] now decides nothing$/m)
    expect(after).toContain('[2] Transfer 1 ETH (native)')
    expect(after).toContain('[3] Transfer 50 ETH (native)')
    expect(after).not.toContain('[1] Transfer')
    expect(after).toContain('"a N" approves [N], "d N" denies it; numbers stay with their request and are never reused')

    // The ended request's number, and one never shown, decide nothing and say so; C is still waiting.
    input.write('a 1\n')
    input.write('d 7\n')
    input.write('a 3 x\n')
    await until(() => err.length === 3, 'the three refusals')
    expect(err).toEqual([
      expect.stringMatching(/^\[1\] has ended \(expired\): Transfer 0\.001 ETH \(native\) to 0x2+ on Base\. Nothing was decided; numbers are never reused$/),
      'there is no request [7] in this watch. Nothing was decided',
      'type "a N" to approve request [N], "d N" to deny it, "q" to quit',
    ])
    expect(granted).toEqual([b])
    expect(pending.list().map((p) => p.intent.id)).toEqual([c])
    input.end('q\n')
    expect(await done).toBe(0)
  })

  it('a wrong operator token: the feed refuses it and the command fails', async () => {
    const a = await approver()
    const err: string[] = []
    const code = await runApproveCli(['watch', '--url', a.url], { out: () => {}, err: (s) => err.push(s), env: { SERVICE_OPERATOR_TOKEN: 'not-the-token' }, input: new PassThrough() })
    expect(code).toBe(1)
    expect(err.join('\n')).toContain('operator token was refused')
  })
})

describe('countersign-approve with named operators and a quorum', () => {
  it('says whose token it is, shows the votes on the card, and the second operator completes the quorum', async () => {
    const a = await approver({ quorum: true })
    const out: string[] = []
    const err: string[] = []
    const input = new PassThrough()
    const done = runApproveCli(['watch', '--url', a.url], { out: (s) => out.push(s), err: (s) => err.push(s), env: { SERVICE_OPERATOR_TOKEN: ALICE }, input })
    await until(() => out.includes('signed in as alice'), 'the operator line')
    const t = await a.ask()
    if (t.state !== 'pending') throw new Error('expected pending')
    await until(() => out.some((o) => /Quorum +0 of 2 approvals; 2 more needed/.test(o)), 'the quorum line of the card')
    input.write('a 1\n')
    await until(() => out.some((o) => o.startsWith('approval counted')), 'the counted vote')
    expect(out.find((o) => o.startsWith('approval counted'))).toBe(`approval counted ${t.requestId} as alice: 1 of 2 approvals (alice); 1 more needed from other operators`)
    await until(() => out.some((o) => o.includes('[1] ') && /Quorum +1 of 2 approvals \(alice\); 1 more needed/.test(o)), 'the card updated in place')
    input.write('a 1\n')
    await until(() => out.some((o) => o.startsWith('already approved (counted once)')), 'the repeated vote')
    expect(a.service.pending.list()).toHaveLength(1)

    const bobSays: string[] = []
    expect(await runApproveCli(['approve', t.requestId, '--url', a.url], { out: (s) => bobSays.push(s), err: (s) => bobSays.push(s), env: { SERVICE_OPERATOR_TOKEN: BOB } })).toBe(0)
    expect(bobSays).toEqual([`approved ${t.requestId} as bob: quorum met (alice, bob)`])
    expect(a.service.pending.list()).toEqual([])
    await until(() => out.at(-1)!.includes('no pending requests'), 'the request to leave the list')
    input.end('q\n')
    expect(await done).toBe(0)
    expect(err).toEqual([])
  })
})

describe('countersign-approve list: a client\u2019s note cannot lay out a card', () => {
  it('a note padded to the terminal\u2019s width shows as one row, and each card ends with its number, title and binding (found by review)', async () => {
    const a = await approver()
    const intent = makeIntent({ action: actions.native('1000000000000000000') })
    const fake = ['[2] Transfer 0.001 ETH (native) to 0x2222222222222222222222222222222222222222 on Base', '    Send       0.001 ETH', '    ──── [2]: Transfer 0.001 ETH (native)']
    intent.metadata = { note: 'invoice 4711'.padEnd(80 - 30, '\u00a0') + fake.map((l) => l.padEnd(80, ' ')).join('') }
    await a.service.requestApproval({ intent, preflight: noPreflight(), policyReasons: ['above threshold'] })
    const out: string[] = []
    const err: string[] = []
    expect(await runApproveCli(['list', '--url', a.url], { out: (s) => out.push(s), err: (s) => err.push(s), env: { SERVICE_OPERATOR_TOKEN: TOKEN }, columns: 80 })).toBe(0)
    const lines = out.join('\n').split('\n')
    expect(lines.filter((l) => l.startsWith('[2]') || /^\s*(Send +0\.001|──── \[2\])/.test(l))).toEqual([])
    const note = lines.filter((l) => l.includes('client says:'))
    expect(note).toEqual([expect.stringMatching(/^ {4}Note +client says: invoice 4711 \[2\] Transfer 0\.001 ETH.*…$/)])
    expect([...note[0]!].length).toBe(79)
    const [p] = a.service.pending.list()
    expect(lines.slice(-2)).toEqual([`    ──── [1]: ${p!.summary.action}`, `    ──── binds ${p!.summary.txRequestHash}`])
    expect(err).toEqual([])
  })
})

describe('decisionText', () => {
  it('names the operator and the quorum state', () => {
    expect(decisionText('r1', true, {})).toBe('approved r1')
    expect(decisionText('r1', false, { operator: 'carol' })).toBe('denied r1 as carol')
    const quorum = { required: 3, approvals: 2, approvedBy: ['alice', 'bob'], remaining: 1 }
    expect(decisionText('r1', true, { decided: false, operator: 'bob', quorum, counted: true })).toBe('approval counted r1 as bob: 2 of 3 approvals (alice, bob); 1 more needed from other operators')
    expect(decisionText('r1', false, { decided: true, operator: 'carol', quorum })).toBe('denied r1 as carol')
  })
})

describe('countersign-approve on bad input', () => {
  it('an operator-token path it cannot read (a directory) is an error in words, exit 1, not a crash', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'cs-approve-token-'))
    mkdirSync(path.join(dir, 'operator-token'))
    const err: string[] = []
    const code = await runApproveCli(['list', '--url', 'http://127.0.0.1:9', '--data-dir', dir], { out: () => {}, err: (s) => err.push(s), env: {}, input: new PassThrough() })
    expect(code).toBe(1)
    expect(err).toEqual([`countersign-approve: cannot read the operator token at ${path.join(dir, 'operator-token')}: EISDIR`])
  })

  it('an empty --data-dir is refused, not taken as the working directory', async () => {
    const err: string[] = []
    const code = await runApproveCli(['list', '--url', 'http://127.0.0.1:9', '--data-dir', ''], { out: () => {}, err: (s) => err.push(s), env: {}, input: new PassThrough() })
    expect(code).toBe(1)
    expect(err).toEqual(['countersign-approve: --data-dir needs a directory (it was given empty)'])
  })

  it('a feed message it cannot read (not JSON, a request without its card) is reported and skipped; the feed goes on', async () => {
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 })
    await once(wss, 'listening')
    closers.push(() => new Promise((r) => wss.close(r)))
    const a = await approver()
    const good = await a.ask()
    wss.on('connection', (ws) => {
      ws.once('message', () => {
        ws.send('not json')
        ws.send(JSON.stringify({ type: 'request', request: { requestId: 'broken' } }))
        // A real pending list, as the approver sends it, after the two it cannot read.
        void fetch(`${a.url}/v1/approvals/pending`).then(async (r) => {
          ws.send(JSON.stringify({ type: 'pending', ...((await r.json()) as object) }))
        })
      })
    })
    const out: string[] = []
    const err: string[] = []
    const input = new PassThrough()
    const running = runApproveCli(['watch', '--url', `http://127.0.0.1:${(wss.address() as { port: number }).port}`], { out: (s) => out.push(s), err: (s) => err.push(s), env: { SERVICE_OPERATOR_TOKEN: TOKEN }, input })
    await until(() => out.some((s) => good.state === 'pending' && s.includes(good.requestId)), 'the pending list after the unreadable messages')
    expect(err).toEqual([expect.stringMatching(/^countersign-approve: a feed message could not be read and was skipped \(/), expect.stringMatching(/^countersign-approve: a feed message could not be read and was skipped \(/)])
    input.end('q\n')
    expect(await running).toBe(0)
  })
})

describe('countersign-approve: where it calls, in words', () => {
  const run = async (argv: string[], env: Record<string, string> = { SERVICE_OPERATOR_TOKEN: TOKEN }) => {
    const out: string[] = []
    const err: string[] = []
    const code = await runApproveCli(argv, { out: (s) => out.push(s), err: (s) => err.push(s), env, input: new PassThrough() })
    return { code, out, err }
  }

  it('--url=X is the same as --url X, and --url without a value is an error, not the default address', async () => {
    const a = await approver()
    await a.ask()
    expect((await run(['list', `--url=${a.url}`])).out.join('\n')).toContain('[1]')
    expect(await run(['list', '--url'])).toEqual({ code: 1, out: [], err: ['countersign-approve: --url needs a value'] })
    expect(await run(['list', '--url='])).toEqual({ code: 1, out: [], err: ['countersign-approve: --url needs a value'] })
    expect((await run(['list', '--url', 'foo'])).err).toEqual(['countersign-approve: --url foo is not a URL (for example http://127.0.0.1:3100)'])
  })

  it('a gateway that is not there, or a server that is not countersign, is said in words (no stack trace)', async () => {
    // A port nothing listens on any more.
    const gone = createServer()
    await new Promise<void>((r) => gone.listen(0, '127.0.0.1', r))
    const closedUrl = `http://127.0.0.1:${(gone.address() as { port: number }).port}`
    await new Promise((r) => gone.close(r))
    const refused = await run(['list', '--url', closedUrl])
    expect(refused.code).toBe(1)
    expect(refused.err).toEqual([`countersign-approve: cannot reach ${closedUrl}: ECONNREFUSED`])
    for (const body of ['<html>', '{}', '{"pending":[{"requestId":"r"}]}']) {
      const other = createServer((_req, res) => res.end(body))
      await new Promise<void>((r) => other.listen(0, '127.0.0.1', r))
      closers.push(() => new Promise((r) => other.close(r)))
      const url = `http://127.0.0.1:${(other.address() as { port: number }).port}`
      expect(await run(['list', '--url', url])).toEqual({ code: 1, out: [], err: [`countersign-approve: GET /v1/approvals/pending at ${url} did not answer a pending list; is this countersign's gateway?`] })
    }
  })
})
