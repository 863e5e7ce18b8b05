import type { RpcFetch, RpcHttpInit, RpcHttpResponse } from './keepAliveFetch.js'

// JSON-RPC calls to one node that are made in the same turn of the event loop
// travel as one JSON-RPC batch (one HTTP request, an array of calls) instead
// of one HTTP request each. The gateway's reads come in groups (a preflight:
// simulation, block and tip; a sign-and-send: nonce, block, tip and gas), and
// under load the HTTP requests to the node were the largest part of its CPU
// per transfer (bench/RESULTS.md, issue 17); the node saves the same work.
//
// Each call keeps its own answer, error and abort: viem still sends one call
// per fetch and reads one answer per fetch, and a call whose timeout fires is
// refused alone while the others go on. A node that does not take batches
// (an answer that is not an array answering every call, or a 4xx) gets each
// call again on its own, and no more batches; a call the node calls an
// invalid request inside a batch (-32600) is sent again on its own.

/** At most this many calls in one batch (providers cap batches; 50 is below every common cap). */
export const MAX_RPC_BATCH = 50

interface Queued {
  init: RpcHttpInit & { body: string }
  id: number | string
  resolve: (r: RpcHttpResponse) => void
  reject: (e: Error) => void
  settled: boolean
  detach: () => void
}

/** `send` makes one HTTP request; the options raise its answer ceiling for a batch of `calls`. */
export type RpcSender = (url: string, init: RpcHttpInit, opts?: { calls?: number }) => Promise<RpcHttpResponse>

export function createBatchingFetch(send: RpcSender, opts: { maxBatch?: number } = {}): RpcFetch {
  const maxBatch = opts.maxBatch ?? MAX_RPC_BATCH
  let queues = new Map<string, Queued[]>()
  let scheduled = false
  /** Nodes that refused a batch: every call goes on its own from then on. */
  const unbatched = new Set<string>()

  function flush(): void {
    scheduled = false
    const ready = queues
    queues = new Map()
    for (const [url, queued] of ready) {
      for (const chunk of chunks(queued, maxBatch)) {
        if (chunk.length === 1) forward(url, chunk[0]!)
        else sendBatch(url, chunk)
      }
    }
  }

  /** The call on its own, as if it had never waited for company. */
  function forward(url: string, q: Queued): void {
    if (q.settled) return
    send(url, q.init).then(
      (r) => settle(q, () => q.resolve(r)),
      (e: Error) => settle(q, () => q.reject(e)),
    )
  }

  function sendBatch(url: string, batch: Queued[]): void {
    const whole = new AbortController()
    let open = batch.length
    const onGone = () => {
      open -= 1
      if (open === 0) whole.abort(new Error('every call of the batch was aborted'))
    }
    for (const q of batch) q.detach = chain(q.detach, onGone)
    const first = batch[0]!.init
    const body = `[${batch.map((q) => q.init.body).join(',')}]`
    send(url, { method: 'POST', headers: first.headers ?? {}, body, signal: whole.signal }, { calls: batch.length }).then(
      async (res) => {
        const answers = res.ok ? answersById(await res.text()) : null
        if (!answers || batch.some((q) => !answers.has(q.id))) {
          // Not a batch answer: this node does not take batches (a 429 or a 5xx may pass; a 4xx or a malformed 2xx will not).
          if (res.status !== 429 && res.status < 500) unbatched.add(url)
          for (const q of batch) forward(url, q)
          return
        }
        for (const q of batch) {
          const answer = answers.get(q.id)!
          if (isInvalidRequest(answer)) forward(url, q)
          else settle(q, () => q.resolve(itemResponse(res, answer.text)))
        }
      },
      (err: Error) => {
        for (const q of batch) settle(q, () => q.reject(err))
      },
    )
  }

  function settle(q: Queued, done: () => void): void {
    if (q.settled) return
    q.settled = true
    q.detach()
    done()
  }

  return (url, init) => {
    const call = singleCall(init)
    if (!call || unbatched.has(url) || init.signal?.aborted) return send(url, init)
    return new Promise<RpcHttpResponse>((resolve, reject) => {
      const q: Queued = { init: { ...init, body: init.body! }, id: call.id, resolve, reject, settled: false, detach: () => {} }
      const signal = init.signal
      if (signal) {
        const onAbort = () => settle(q, () => reject(abortError(signal)))
        signal.addEventListener('abort', onAbort, { once: true })
        q.detach = () => signal.removeEventListener('abort', onAbort)
      }
      const queued = queues.get(url)
      if (queued) queued.push(q)
      else queues.set(url, [q])
      // The check phase, after this turn's callbacks: every call they make joins.
      if (!scheduled) {
        scheduled = true
        setImmediate(flush)
      }
    })
  }
}

const VIEM_CALL = /^\{"jsonrpc":"2\.0","id":(0|[1-9][0-9]{0,14}),"method":"/

/** A POST of one JSON-RPC call (not already a batch) with an id to match its answer by. */
function singleCall(init: RpcHttpInit): { id: number | string } | null {
  if ((init.method ?? 'POST') !== 'POST' || typeof init.body !== 'string' || !init.body.startsWith('{')) return null
  // viem's own shape, read without parsing the whole call (its params can be large).
  const viem = VIEM_CALL.exec(init.body)
  if (viem) return { id: Number(viem[1]) }
  let parsed: unknown
  try {
    parsed = JSON.parse(init.body)
  } catch {
    return null
  }
  const { id, method } = parsed as { id?: unknown; method?: unknown }
  if (typeof method !== 'string' || (typeof id !== 'number' && typeof id !== 'string')) return null
  return { id }
}

/** Splits `queued` into batches of at most `max`, no two calls of one batch with the same id. */
function chunks(queued: Queued[], max: number): Queued[][] {
  const out: Queued[][] = []
  let current: Queued[] = []
  let ids = new Set<number | string>()
  for (const q of queued) {
    if (q.settled) continue
    if (current.length === max || ids.has(q.id)) {
      out.push(current)
      current = []
      ids = new Set()
    }
    current.push(q)
    ids.add(q.id)
  }
  if (current.length > 0) out.push(current)
  return out
}

/** Each answer of a batch reply by its id, with its own JSON text; null when the reply is not an array of answers. */
function answersById(text: string): Map<number | string, { text: string; error: unknown }> | null {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return null
  }
  if (!Array.isArray(parsed)) return null
  const answers = new Map<number | string, { text: string; error: unknown }>()
  for (const item of parsed as unknown[]) {
    const id = (item as { id?: unknown } | null)?.id
    if (typeof id === 'number' || typeof id === 'string') answers.set(id, { text: JSON.stringify(item), error: (item as { error?: unknown }).error })
  }
  return answers
}

function isInvalidRequest(answer: { error: unknown }): boolean {
  return (answer.error as { code?: unknown } | undefined)?.code === -32600
}

/** One call's answer as if it had come alone: the batch reply's status and headers, without its length. */
function itemResponse(batch: RpcHttpResponse, text: string): RpcHttpResponse {
  return {
    ok: batch.ok,
    status: batch.status,
    statusText: batch.statusText,
    headers: { get: (name) => (name.toLowerCase() === 'content-length' ? null : batch.headers.get(name)) },
    body: null,
    text: () => Promise.resolve(text),
  }
}

function chain(a: () => void, b: () => void): () => void {
  return () => {
    a()
    b()
  }
}

/** What an aborted call rejects with: the signal's reason, or an AbortError as fetch gives. */
export function abortError(signal: AbortSignal): Error {
  if (signal.reason instanceof Error) return signal.reason
  const err = new Error('This operation was aborted')
  err.name = 'AbortError'
  return err
}
