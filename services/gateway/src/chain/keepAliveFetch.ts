import http from 'node:http'
import https from 'node:https'
import { urlToHttpOptions } from 'node:url'
import { abortError, createBatchingFetch, type RpcSender } from './rpcBatch.js'

/** What viem's HTTP transport reads of a fetch Response when it has no body stream. */
export interface RpcHttpResponse {
  ok: boolean
  status: number
  statusText: string
  headers: { get(name: string): string | null }
  body: null
  text(): Promise<string>
}

export interface RpcHttpInit {
  method?: string
  headers?: Record<string, string>
  body?: string
  signal?: AbortSignal | null
}

export type RpcFetch = (url: string, init: RpcHttpInit) => Promise<RpcHttpResponse>

/** The same ceiling as viem's own default for a JSON-RPC answer. */
export const MAX_RPC_RESPONSE_BYTES = 10 * 1024 * 1024

/**
 * A fetch for viem's HTTP transport (`http(url, { fetchFn })`) made of
 * node:http with keep-alive sockets. Under load the gateway spent a quarter
 * of its CPU in the global fetch (undici's Request, Response, Headers and web
 * streams) for JSON-RPC calls of a few hundred bytes (bench/RESULTS.md,
 * issue 17). viem still builds the request, applies the timeout, parses the
 * answer and raises its own errors, exactly as with fetch. Differences from
 * fetch: no redirects are followed (a JSON-RPC endpoint answers where it is
 * asked), and the answer is cut off at `maxBodyBytes`. Unless `batch` is
 * false, calls made in the same turn of the event loop share one HTTP request
 * as a JSON-RPC batch (rpcBatch.ts).
 */
export function createKeepAliveFetch(opts: { maxBodyBytes?: number; batch?: boolean; onSlowCall?: (report: SlowRpcCall) => void; slowMs?: number } = {}): RpcFetch {
  const send = createRpcSender(opts.maxBodyBytes ?? MAX_RPC_RESPONSE_BYTES, opts.onSlowCall, opts.slowMs ?? SLOW_RPC_CALL_MS)
  return opts.batch === false ? (url, init) => send(url, init) : createBatchingFetch(send)
}

/** An HTTP request to a node slower than this is reported (onSlowCall): a local node answers in milliseconds. */
export const SLOW_RPC_CALL_MS = 2000

/**
 * A request to a node that took at least the slow threshold, or ended
 * without an answer: viem's timeout aborted it (and viem may retry it), or
 * the connection failed. Only the host is named: an RPC URL's path or query
 * often holds a provider's API key.
 */
export interface SlowRpcCall {
  host: string
  ms: number
  /** JSON-RPC calls the request carried (a batch carries several). */
  calls: number
  outcome: 'answered' | 'aborted' | 'failed'
  error?: string
}

/** One HTTP request per call; a batch of `calls` calls may answer up to `calls` times the ceiling. */
function createRpcSender(maxBodyBytes: number, onSlowCall: ((report: SlowRpcCall) => void) | undefined, slowMs: number): RpcSender {
  const send = createPlainSender(maxBodyBytes)
  if (!onSlowCall) return send
  return (url, init, sendOpts = {}) => {
    const started = performance.now()
    const report = (outcome: SlowRpcCall['outcome'], err?: Error) => {
      const ms = Math.round(performance.now() - started)
      if (outcome === 'answered' && ms < slowMs) return
      let host = ''
      try {
        host = new URL(url).host
      } catch {
        /* not a URL: the sender refused it already */
      }
      try {
        onSlowCall({ host, ms, calls: sendOpts.calls ?? 1, outcome, ...(err ? { error: err.message } : {}) })
      } catch {
        /* a report must never change the call's outcome */
      }
    }
    return send(url, init, sendOpts).then(
      (r) => (report('answered'), r),
      (err: Error) => {
        report(init.signal?.aborted ? 'aborted' : 'failed', err)
        throw err
      },
    )
  }
}

function createPlainSender(maxBodyBytes: number): RpcSender {
  const agents = {
    'http:': new http.Agent({ keepAlive: true }),
    'https:': new https.Agent({ keepAlive: true }),
  }
  // A gateway talks to a handful of nodes: each URL is parsed once.
  const targets = new Map<string, { client: typeof http | typeof https; options: http.RequestOptions }>()
  const targetOf = (url: string) => {
    let t = targets.get(url)
    if (!t) {
      const parsed = new URL(url)
      const client = parsed.protocol === 'https:' ? https : parsed.protocol === 'http:' ? http : null
      if (!client) throw new Error(`unsupported RPC URL scheme ${parsed.protocol}`)
      t = { client, options: { ...urlToHttpOptions(parsed), agent: agents[parsed.protocol as 'http:' | 'https:'] } }
      if (targets.size < 64) targets.set(url, t)
    }
    return t
  }
  return (url, init, sendOpts = {}) =>
    new Promise<RpcHttpResponse>((resolve, reject) => {
      const limit = maxBodyBytes * Math.max(1, sendOpts.calls ?? 1)
      let target: ReturnType<typeof targetOf>
      try {
        target = targetOf(url)
      } catch (err) {
        reject(err as Error)
        return
      }
      const signal = init.signal ?? null
      if (signal?.aborted) {
        reject(abortError(signal))
        return
      }
      const body = init.body ?? ''
      const req = target.client.request({
        ...target.options,
        method: init.method ?? 'POST',
        headers: { ...init.headers, 'content-length': Buffer.byteLength(body) },
      })
      let settled = false
      const fail = (err: Error) => {
        if (settled) return
        settled = true
        signal?.removeEventListener('abort', onAbort)
        req.destroy()
        reject(err)
      }
      const onAbort = () => fail(abortError(signal!))
      signal?.addEventListener('abort', onAbort, { once: true })
      req.on('error', fail)
      req.once('response', (res) => {
        const chunks: Buffer[] = []
        let size = 0
        res.on('data', (chunk: Buffer) => {
          size += chunk.length
          if (size > limit) fail(new Error(`the RPC answer is larger than ${limit} bytes`))
          else chunks.push(chunk)
        })
        res.on('error', fail)
        res.once('end', () => {
          if (settled) return
          settled = true
          signal?.removeEventListener('abort', onAbort)
          const text = Buffer.concat(chunks).toString('utf8')
          const status = res.statusCode ?? 0
          resolve({
            ok: status >= 200 && status < 300,
            status,
            statusText: res.statusMessage ?? '',
            headers: { get: (name) => headerValue(res.headers[name.toLowerCase()]) },
            body: null,
            text: () => Promise.resolve(text),
          })
        })
      })
      req.end(body)
    })
}

function headerValue(v: string | string[] | undefined): string | null {
  if (v === undefined) return null
  return Array.isArray(v) ? v.join(', ') : v
}
