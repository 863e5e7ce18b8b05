#!/usr/bin/env node
// Terminal approval client for operators without a browser: lists pending
// requests live and approves or denies them with the operator token.
import { existsSync, readFileSync, realpathSync } from 'node:fs'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { pathToFileURL } from 'node:url'
import WebSocket from 'ws'
import { OperatorError, dataDirOption, describeFailure, readDataDir, readGatewayListen } from '@countersign/shared'
import { cardText } from '../card/cardText.js'
import type { ApprovalCard } from '../card/renderCard.js'
import type { QuorumView } from '../quorum/quorumVotes.js'

const USAGE = `usage: countersign-approve [watch]            live list (the authenticated feed); "a N" approves, "d N" denies, "q" quits
       countersign-approve list                 print pending requests once
       countersign-approve approve <requestId>
       countersign-approve deny <requestId>

options: --url URL (default http://127.0.0.1:$SERVICE_PORT or :3100)
         --data-dir DIR (where operator-token lives; default SERVICE_DATA_DIR or ./data)
The operator token comes from SERVICE_OPERATOR_TOKEN or DATA_DIR/operator-token.
With named operators (SERVICE_OPERATORS_FILE) each uses their own token; the
watch says whose it is, and a request above the policy's requireQuorumAbove
shows "Quorum: 1 of 2 approvals (alice)" until enough operators approved.`

interface Pending {
  requestId: string
  ttlSeconds: number
  card: ApprovalCard
  /** Above the policy's requireQuorumAbove: the named operators' approvals so far. */
  quorum?: QuorumView
}

/** The decide route's answer (the approver's DecideResult). */
interface DecideAnswer {
  decided?: boolean
  operator?: string
  quorum?: QuorumView
  counted?: boolean
  message?: string
}

/** One line on what a decision did: who decided and, on a quorum request, how many approvals it has and needs. */
export function decisionText(requestId: string, approved: boolean, a: DecideAnswer): string {
  const as = a.operator ? ` as ${a.operator}` : ''
  const q = a.quorum
  if (!q) return `${approved ? 'approved' : 'denied'} ${requestId}${as}`
  if (a.decided === false) {
    const vote = a.counted === false ? 'already approved (counted once)' : 'approval counted'
    return `${vote} ${requestId}${as}: ${q.approvals} of ${q.required} approvals (${q.approvedBy.join(', ')}); ${q.remaining} more needed from other operators`
  }
  return approved ? `approved ${requestId}${as}: quorum met (${q.approvedBy.join(', ')})` : `denied ${requestId}${as}`
}

export interface ApproveIo {
  out: (s: string) => void
  err: (s: string) => void
  env: Record<string, string | undefined>
  input?: NodeJS.ReadableStream
  fetch?: typeof fetch
}

/** `--name value` or `--name=value`; an option given without its value is an error, never ignored. */
function option(args: string[], name: string): string | undefined {
  const joined = args.find((a) => a.startsWith(`${name}=`))
  if (joined !== undefined) {
    const value = joined.slice(name.length + 1)
    if (value === '') throw new OperatorError(`${name} needs a value`)
    return value
  }
  const i = args.indexOf(name)
  if (i === -1) return undefined
  const value = args[i + 1]
  if (value === undefined || value.startsWith('--')) throw new OperatorError(`${name} needs a value`)
  return value
}

/** A URL the CLI can call: http or https, nothing else. */
function gatewayUrl(text: string): string {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw new OperatorError(`--url ${text} is not a URL (for example http://127.0.0.1:3100)`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new OperatorError(`--url ${text} must be an http or https URL`)
  return text.replace(/\/+$/, '')
}

/** The pending list with the same card the dashboard and the cli prompt show. */
export function formatPending(list: Pending[]): string {
  if (list.length === 0) return 'no pending requests'
  return list.map((p, n) => cardText(p.card, { requestId: p.requestId, ttlSeconds: p.ttlSeconds, indent: '    ' }).map((line, i) => (i === 0 ? `[${n + 1}] ${line}` : line)).join('\n')).join('\n')
}

export async function runApproveCli(argv: string[], io: ApproveIo): Promise<number> {
  if (argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') {
    io.out(USAGE)
    return 0
  }
  const doFetch = io.fetch ?? fetch
  const [command = 'watch', ...rest] = argv.filter((a, i) => !a.startsWith('--') && !(i > 0 && argv[i - 1]!.startsWith('--') && !argv[i - 1]!.includes('=')))
  let base: string
  let tokenFile: string
  let token: string
  try {
    const given = option(argv, '--url')
    base = given !== undefined ? gatewayUrl(given) : `http://127.0.0.1:${readGatewayListen(io.env).port}`
    const dirOption = option(argv, '--data-dir')
    tokenFile = path.join(dirOption !== undefined ? dataDirOption(dirOption) : readDataDir(io.env), 'operator-token')
    // Presented as given: the approver decides whether it is an operator's token (named operators choose their own).
    token = io.env.SERVICE_OPERATOR_TOKEN?.trim() || readTokenFile(tokenFile)
  } catch (err) {
    io.err(`countersign-approve: ${describeFailure(err)}`)
    return 1
  }

  // A gateway that cannot be reached, or answers something else than the service would, is said in words.
  const call = async (url: string, init?: RequestInit): Promise<Response> => {
    try {
      return await doFetch(url, { ...init, signal: AbortSignal.timeout(30_000) })
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause
      throw new OperatorError(`cannot reach ${base}: ${cause?.code ?? cause?.message ?? (err as Error).message}`)
    }
  }
  const list = async (): Promise<Pending[]> => {
    const r = await call(`${base}/v1/approvals/pending`)
    if (!r.ok) throw new OperatorError(`GET /v1/approvals/pending: ${r.status}`)
    const body = (await r.json().catch(() => null)) as { pending?: unknown } | null
    const isRequest = (p: unknown) => typeof p === 'object' && p !== null && typeof (p as Pending).requestId === 'string' && typeof (p as Pending).card === 'object' && (p as Pending).card !== null
    if (!body || !Array.isArray(body.pending) || !body.pending.every(isRequest)) {
      throw new OperatorError(`GET /v1/approvals/pending at ${base} did not answer a pending list; is this countersign's gateway?`)
    }
    return body.pending as Pending[]
  }
  const decide = async (requestId: string, approved: boolean): Promise<boolean> => {
    const r = await call(`${base}/v1/approvals/${encodeURIComponent(requestId)}/decide`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify({ approved }),
    })
    const body = (await r.json().catch(() => ({}))) as DecideAnswer
    if (r.ok) io.out(decisionText(requestId, approved, body))
    else io.err(`could not decide ${requestId}: ${r.status} ${body.message ?? ''}`.trim())
    return r.ok
  }

  try {
    switch (command) {
      case 'list':
        io.out(formatPending(await list()))
        return 0
      case 'approve':
      case 'deny': {
        const id = rest[0]
        if (!id) {
          io.err(USAGE)
          return 2
        }
        return (await decide(id, command === 'approve')) ? 0 : 1
      }
      case 'watch': {
        if (!token) {
          io.err(`countersign-approve: the live feed needs the operator token (SERVICE_OPERATOR_TOKEN or ${tokenFile})`)
          return 1
        }
        let current: Pending[] = []
        const ws = new WebSocket(`${base.replace(/^http/, 'ws')}/v1/approvals/ws`)
        // The first message authenticates; the approver sends nothing before it.
        ws.on('open', () => ws.send(JSON.stringify({ type: 'auth', token })))
        ws.on('message', (data) => {
          try {
            follow(data.toString())
          } catch (err) {
            // One message this version cannot read (another approver version, a broken proxy) is reported and skipped.
            io.err(`countersign-approve: a feed message could not be read and was skipped (${(err as Error).message})`)
          }
        })
        const follow = (text: string) => {
          const msg = JSON.parse(text) as { type: string; pending?: Pending[]; request?: Pending; requestId?: string; name?: string | null }
          // Sent once after the token is accepted: whose token this is (null: the single operator token).
          if (msg.type === 'operator') return io.out(msg.name ? `signed in as ${msg.name}` : 'signed in with the operator token')
          let next: Pending[]
          if (msg.type === 'pending') next = msg.pending ?? []
          // A new request, or one whose quorum votes changed: replaced in place, so its number stays.
          else if (msg.type === 'request' && msg.request) {
            const i = current.findIndex((p) => p.requestId === msg.request!.requestId)
            next = i === -1 ? [...current, msg.request] : current.map((p, n) => (n === i ? msg.request! : p))
          }
          else if (msg.type === 'ended') next = current.filter((p) => p.requestId !== msg.requestId)
          else return
          // Formatted before it is kept: a request that cannot be shown (throws here) leaves the list as it was.
          const shown = formatPending(next)
          current = next
          io.out(`\n${new Date().toLocaleTimeString()}\n${shown}\n> `)
        }
        const closed = new Promise<number>((resolve) => {
          ws.on('close', (code) => {
            if (code === 4401) io.err('countersign-approve: the operator token was refused')
            else io.err(`countersign-approve: the live feed closed (${code})`)
            resolve(code === 4401 ? 1 : 0)
          })
          ws.on('error', (err) => io.err(`cannot reach ${base}: ${err.message}`))
        })
        const rl = createInterface({ input: io.input ?? process.stdin })
        const lines = (async () => {
          for await (const line of rl) {
            const [verb, n] = line.trim().split(/\s+/)
            if (verb === 'q') break
            const target = current[Number(n) - 1]
            if ((verb === 'a' || verb === 'd') && target) await decide(target.requestId, verb === 'a')
            else if (verb) io.err('type "a N" to approve, "d N" to deny, "q" to quit')
          }
          return 0
        })()
        const code = await Promise.race([lines, closed])
        rl.close()
        ws.close()
        return code
      }
      default:
        io.err(USAGE)
        return 2
    }
  } catch (err) {
    io.err(`countersign-approve: ${describeFailure(err)}`)
    return 1
  }
}

/** The operator-token file's token, '' when there is none; an unreadable one (a directory, no permission) says so. */
function readTokenFile(file: string): string {
  if (!existsSync(file)) return ''
  try {
    return readFileSync(file, 'utf8').trim()
  } catch (err) {
    throw new OperatorError(`cannot read the operator token at ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  runApproveCli(process.argv.slice(2), {
    out: (s) => process.stdout.write(s.endsWith('> ') ? s : s + '\n'),
    err: (s) => process.stderr.write(s + '\n'),
    env: process.env,
  }).then((code) => process.exit(code))
}
