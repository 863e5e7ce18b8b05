#!/usr/bin/env node
// Terminal approval client for operators without a browser: lists pending
// requests live and approves or denies them with the operator token.
import { existsSync, readFileSync, realpathSync } from 'node:fs'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { pathToFileURL } from 'node:url'
import WebSocket from 'ws'
import { OperatorError, dataDirOption, describeFailure, readDataDir, readGatewayListen } from '@countersign/shared'
import { cardText, DEFAULT_COLUMNS } from '../card/cardText.js'
import type { QuorumView } from '../quorum/quorumVotes.js'
import { emptyWatch, target, withEnded, withList, withRequest, type Numbered, type Pending, type Target, type WatchState } from './watchNumbers.js'

/** How watch numbers requests (the help; each list the watch prints ends with a one-line reminder). */
const NUMBERING = `In watch, a request keeps the number it was first shown with until the watch
ends, and no other request ever gets it: when an earlier request ends, the
others are not renumbered. "a N" for a request that has ended, or a number
never shown, decides nothing and says so.`

const USAGE = `usage: countersign-approve [watch]            live list (the authenticated feed); "a N" approves [N], "d N" denies it, "q" quits
       countersign-approve list                 print pending requests once
       countersign-approve approve <requestId>
       countersign-approve deny <requestId>

options: --url URL (default http://127.0.0.1:$SERVICE_PORT or :3100)
         --data-dir DIR (where operator-token lives; default SERVICE_DATA_DIR or ./data)

${NUMBERING}

The operator token comes from SERVICE_OPERATOR_TOKEN or DATA_DIR/operator-token.
With named operators (SERVICE_OPERATORS_FILE) each uses their own token; the
watch says whose it is, and a request above the policy's requireQuorumAbove
shows "Quorum: 1 of 2 approvals (alice)" until enough operators approved.`

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
  /** The terminal's width (a client's words are kept to one row of it); 80 when not given. */
  columns?: number
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

/** The pending list with the same card the dashboard and the cli prompt show, numbered by position (list prints it once). */
export function formatPending(list: Pending[], columns = DEFAULT_COLUMNS): string {
  return formatNumbered(list.map((request, i) => ({ n: i + 1, request })), columns)
}

/** Each request under its own number, which its first and its closing line (its title again) both carry. */
export function formatNumbered(list: Numbered[], columns = DEFAULT_COLUMNS): string {
  if (list.length === 0) return 'no pending requests'
  return list
    .map(({ n, request: p }) => cardText(p.card, { requestId: p.requestId, ttlSeconds: p.ttlSeconds, indent: '    ', columns, name: `[${n}]` }).map((line, i) => (i === 0 ? `[${n}] ${line}` : line)).join('\n'))
    .join('\n')
}

/** What the watch prints after a change: what just ended (its number is not reused), the list, and how to answer. */
export function formatWatch(s: WatchState, justEnded: number[] = [], columns = DEFAULT_COLUMNS): string {
  const ended = justEnded.map((n) => `[${n}] ended (${s.ended.get(n)!.end}): ${s.ended.get(n)!.title}; [${n}] now decides nothing`)
  const hint = s.shown.length === 0 ? [] : [`"a N" approves [N], "d N" denies it; numbers stay with their request and are never reused`]
  return [...ended, formatNumbered(s.shown, columns), ...hint].join('\n')
}

/** The feed message's change to what the watch shows; null for a message that changes no request. */
function nextWatch(s: WatchState, msg: FeedMessage): WatchState | null {
  if (msg.type === 'pending') return withList(s, msg.pending ?? [])
  // A new request, or one whose quorum votes changed: replaced in place, so its number stays.
  if (msg.type === 'request' && msg.request) return withRequest(s, msg.request)
  if (msg.type === 'ended' && msg.requestId) return withEnded(s, msg.requestId, END_WORDS.has(msg.end ?? '') ? msg.end : 'ended')
  return null
}

/** The approver's RequestEnd values; anything else a feed sends is printed as plain "ended", never as given. */
const END_WORDS = new Set(['approved', 'denied', 'expired', 'withdrawn'])

interface FeedMessage {
  type: string
  pending?: Pending[]
  request?: Pending
  requestId?: string
  end?: string
  name?: string | null
}

/** The answer to "a N" / "d N" when N names no waiting request: nothing is decided, and why. */
function notDecidedText(n: number, t: Exclude<Target, { kind: 'pending' }>): string {
  if (t.kind === 'ended') return `[${n}] has ended (${t.ended.end}): ${t.ended.title}. Nothing was decided; numbers are never reused`
  return `there is no request [${n}] in this watch. Nothing was decided`
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
        io.out(formatPending(await list(), io.columns))
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
        let watch = emptyWatch()
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
          const msg = JSON.parse(text) as FeedMessage
          // Sent once after the token is accepted: whose token this is (null: the single operator token).
          if (msg.type === 'operator') return io.out(msg.name ? `signed in as ${msg.name}` : 'signed in with the operator token')
          const next = nextWatch(watch, msg)
          if (!next) return
          const justEnded = [...next.ended.keys()].filter((n) => !watch.ended.has(n))
          // Formatted before it is kept: a request that cannot be shown (throws here) leaves the list as it was.
          const shown = formatWatch(next, justEnded, io.columns)
          watch = next
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
            const [verb, n, extra] = line.trim().split(/\s+/)
            if (verb === 'q') break
            if ((verb === 'a' || verb === 'd') && n !== undefined && /^[1-9][0-9]{0,8}$/.test(n) && extra === undefined) {
              // Looked up by the number the request was shown with, never by its place in the list.
              const t = target(watch, Number(n))
              if (t.kind === 'pending') await decide(t.request.requestId, verb === 'a')
              else io.err(notDecidedText(Number(n), t))
            } else if (verb) io.err('type "a N" to approve request [N], "d N" to deny it, "q" to quit')
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
    ...(process.stdout.columns ? { columns: process.stdout.columns } : {}),
  }).then((code) => process.exit(code))
}
