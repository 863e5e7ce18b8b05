// What a request costs the gateway beyond a bare fastify route, in two ways:
// throughput of GET /v1/health (the gateway's hooks: host guard, headers,
// error handling, logger) against the bare GET /ready at 32 connections, with
// CPU per request; and sequential latency of a build against the bare POST,
// split with Server-Timing into the time inside the gateway (onRequest to
// onSend) and outside it (the HTTP round trip), back to back and with 2 ms of
// idleness before each request (what a pipeline's waits for disk and chain
// leave: the machine's cores go idle and wake again). Alternating rounds.
import path from 'node:path'
import { cpuPerRequest, fmt, freePort, load, ratio, root, startNode, tempDir, threadCpuMs } from './lib.mjs'

/** @param {number} i the request's number: its wallet */
function intentBody(i) {
  const now = Math.floor(Date.now() / 1000)
  return JSON.stringify({
    version: '1',
    id: crypto.randomUUID(),
    timestamp: now,
    chain: { type: 'evm', chainId: 8453 },
    // A wallet per request: the default policy allows 10 an hour per wallet.
    wallet: { address: `0x${(i + 1).toString(16).padStart(40, '0')}` },
    action: { type: 'transfer_native', to: '0x2222222222222222222222222222222222222222', amount: '1000' },
    constraints: { maxGasWei: '1000000000000000', deadline: now + 3600, maxSlippageBps: 0 },
  })
}

const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, ms))

/**
 * p50 of sequential requests (each after `gapMs` of idleness), and of the gateway's Server-Timing total when it sends one.
 * @param {string} url
 * @param {((i: number) => string) | undefined} body the i-th request's JSON body (POST), or none (GET)
 * @param {number} n
 * @param {number} [gapMs]
 * @returns {Promise<{ client: number, inside: number | null }>} ms
 */
async function sequential(url, body, n, gapMs = 0) {
  /** @type {number[]} */
  const client = []
  /** @type {number[]} */
  const inside = []
  for (let i = 0; i < n; i++) {
    if (gapMs > 0) await sleep(gapMs)
    const payload = body?.(i)
    const t0 = performance.now()
    const r = await fetch(url, payload ? { method: 'POST', headers: { 'content-type': 'application/json' }, body: payload } : {})
    await r.text()
    client.push(performance.now() - t0)
    const total = r.headers.get('server-timing')?.match(/total;dur=([\d.]+)/)
    if (total) inside.push(Number(total[1]))
  }
  const p50 = (/** @type {number[]} */ xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1] ?? NaN
  return { client: p50(client), inside: inside.length ? p50(inside) : null }
}

/**
 * The time outside the gateway: at the client less inside it (NaN when the gateway sent no Server-Timing).
 * @param {{ client: number, inside: number | null }} r
 */
const outside = (r) => (r.inside === null ? NaN : r.client - r.inside)

/** @param {{ rounds?: number, duration?: number, requests?: number }} [opts] duration: seconds of each load */
export async function benchOverhead({ rounds = 2, duration = 5, requests = 1500 } = {}) {
  const port = await freePort()
  const gateway = await startNode(path.join(root, 'services/gateway/dist/main.js'), {
    env: { SERVICE_PORT: String(port), SERVICE_DATA_DIR: tempDir(), SERVICE_LOG_LEVEL: 'warn', SERVICE_SERVER_TIMING: 'on' },
    url: `http://127.0.0.1:${port}/v1/health`,
  })
  const barePort = await freePort()
  const bare = await startNode(path.join(root, 'bench/bare-server.mjs'), { env: { PORT: String(barePort) }, url: `http://127.0.0.1:${barePort}/ready` })
  try {
    console.log('\nthe gateway per request against a bare fastify route, alternating rounds')
    for (let round = 1; round <= rounds; round++) {
      /**
       * @param {string} url
       * @param {number | undefined} pid
       */
      const measure = async (url, pid) => {
        const before = threadCpuMs(pid)
        const result = await load({ url, duration })
        return { result, cpu: cpuPerRequest(pid, before, threadCpuMs(pid), result.total) }
      }
      const runs = { bare: await measure(`http://127.0.0.1:${barePort}/ready`, bare.pid), gateway: await measure(`http://127.0.0.1:${port}/v1/health`, gateway.pid) }
      console.log(
        `  round ${round}  GET, 32 connections: bare /ready ${fmt(runs.bare.result.rps)} req/s (${fmt(runs.bare.cpu?.loopUs, 1)} µs event loop), gateway /v1/health ${fmt(runs.gateway.result.rps)} req/s (${fmt(runs.gateway.cpu?.loopUs, 1)} µs); ratio ${fmt(ratio(runs.gateway.result.rps, runs.bare.result.rps) * 100, 1)} %`,
      )
      const barePost = await sequential(`http://127.0.0.1:${barePort}/bare`, intentBody, requests)
      const build = await sequential(`http://127.0.0.1:${port}/v1/tx/build`, intentBody, requests)
      console.log(
        `  round ${round}  sequential POST, p50 of ${requests}: bare ${fmt(barePost.client, 3)} ms; build ${fmt(build.client, 3)} ms at the client, ${fmt(build.inside, 3)} inside the gateway, ${fmt(outside(build), 3)} outside`,
      )
      const idle = Math.round(requests / 3)
      const barePostIdle = await sequential(`http://127.0.0.1:${barePort}/bare`, intentBody, idle, 2)
      const buildIdle = await sequential(`http://127.0.0.1:${port}/v1/tx/build`, intentBody, idle, 2)
      console.log(
        `  round ${round}  the same, 2 ms idle before each, p50 of ${idle}: bare ${fmt(barePostIdle.client, 3)} ms; build ${fmt(buildIdle.client, 3)} ms at the client, ${fmt(buildIdle.inside, 3)} inside the gateway, ${fmt(outside(buildIdle), 3)} outside`,
      )
    }
  } finally {
    await Promise.all([gateway.stop(), bare.stop()])
  }
}
