// A proxy in front of the gateway for the MCP tests of late answers: it
// forwards every request at once, keeps what went through, and holds the
// gateway's answer to the sign-and-sends a test names (a slow node or
// network behind the gateway), so that the MCP server stops waiting for a
// call the gateway carried out.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

/** One request the proxy forwarded: kept as it arrives, the gateway's answer added once it came. */
export interface Forwarded {
  path: string
  /** The JSON body, if it had one. */
  body?: any
  status?: number
  /** The gateway's answer, parsed when it is JSON. */
  answer?: any
}

export interface HoldingProxy {
  url: string
  /** Which sign-and-sends (1 = the first answered since `forget`) have their answer held; none unless set. */
  holds: (n: number) => boolean
  /** Every request since `forget`, in the order they came. */
  readonly requests: readonly Forwarded[]
  /** The requests to sign-and-send, of `requests`. */
  signAndSends(): Forwarded[]
  /** Starts the record and the sign-and-send count afresh. */
  forget(): void
  close(): void
}

const SIGN_AND_SEND = '/v1/tx/sign-and-send'

function parsed(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/** Forwards to the gateway at `target`; a held answer is given `holdMs` after the gateway gave it. */
export async function startHoldingProxy(target: string, holdMs: number): Promise<HoldingProxy> {
  let requests: Forwarded[] = []
  let answeredSignAndSends = 0
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const c of req) chunks.push(c as Buffer)
    const body = chunks.length ? Buffer.concat(chunks) : undefined
    // Kept on arrival: a test may look for a request whose answer is still held.
    const record: Forwarded = { path: req.url!, ...(body ? { body: JSON.parse(body.toString()) } : {}) }
    requests.push(record)
    const headers = { 'content-type': req.headers['content-type'] ?? 'application/json', ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}) }
    let r: Response, text: string
    try {
      r = await fetch(target + req.url, { method: req.method!, headers, ...(body ? { body } : {}) })
      text = await r.text()
    } catch {
      // The stack stopped under a call still running (a failed test's): no answer.
      res.destroy()
      return
    }
    record.status = r.status
    record.answer = parsed(text)
    if (req.url === SIGN_AND_SEND && proxy.holds(++answeredSignAndSends)) await new Promise((s) => setTimeout(s, holdMs))
    if (res.destroyed) return
    res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'application/json' }).end(text)
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const proxy: HoldingProxy = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    holds: () => false,
    get requests() {
      return requests
    },
    signAndSends: () => requests.filter((f) => f.path === SIGN_AND_SEND),
    forget() {
      requests = []
      answeredSignAndSends = 0
    },
    close() {
      server.closeAllConnections()
      server.close()
    },
  }
  return proxy
}
