// The approval hop alone (issue 17, goals 2 and 3, the approver's part of
// POST /v1/tx/approve-request): requestApproval on approver.sock, as the
// gateway sends it, against a real signer (the token minted on grant.sock)
// and the real shared audit.db, in auto mode. No gateway, no chain: what is
// left is the approver's own work, its audit commits and the grant round trip.
//
//   node bench/approver.mjs                      this build
//   APPROVER_AB=/path/to/approver/dist/main.js   other builds too (comma-separated), interleaved
//                                                round by round on the same signer
//   BENCH_CPU_PROF=dir                           --cpu-prof of the approvers
//   APPROVER_SEQUENTIAL_ONLY=1                   no concurrent part
//
// Prints, per build: sequential latency p50/p99, the approver's CPU per
// request (event loop and other threads, from /proc), the signer's CPU per
// request, audit commits per request; then 8 requests in flight at a time.
import { writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { approverMethods, createRpcClient, openAuditLog } from '@countersign/shared'
import { privateKeyToAccount } from 'viem/accounts'
import { cpuPerRequest, fmt, freePort, nth, profileArgs, root, spawnReady, tempDir, threadCpuMs } from './lib.mjs'
import { transferIntent } from './signing.mjs'
import { devKeys, importKeys, PASSPHRASE } from './stack.mjs'

const ROUNDS = Number(process.env.APPROVER_ROUNDS ?? 6)
const PER_ROUND = Number(process.env.APPROVER_PER_ROUND ?? 200)
const CONCURRENCY = 8

/**
 * What the gateway sends for a native transfer that policy sends to approval (preflight from a real simulation).
 * @param {import('viem').Address} wallet
 * @param {number} n
 */
function paramsFor(wallet, n) {
  return {
    intent: transferIntent(wallet, n),
    preflight: {
      riskScore: 10,
      riskFactors: [{ id: 'new_recipient', weight: 10, detail: 'first transfer to this recipient' }],
      warnings: [],
      balanceDiffs: [{ token: '0x0000000000000000000000000000000000000000', change: `-${1000 + n}` }],
      gasEstimate: '21000',
      simulationSuccess: true,
    },
    policyReasons: ['value 0.000000000000001 ETH is above requireApprovalAbove (1 wei)'],
  }
}

const quantiles = (/** @type {number[]} */ xs) => {
  const s = [...xs].sort((a, b) => a - b)
  const q = (/** @type {number} */ p) => s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? NaN
  return { p50: q(0.5), p99: q(0.99) }
}

/**
 * CPU and audit rows added up over a part of the run: µs on the approver's
 * event loop and its other threads, µs in the signer; audit rows.
 * @typedef {{ loop: number, others: number, signer: number, rows?: number }} Spent
 */

/**
 * One approver build under test, and what it measured.
 * @typedef {object} Build
 * @property {string} name
 * @property {string} entry
 * @property {number[]} seq sequential latencies, ms
 * @property {Spent & { n: number, rows: number }} cpu the sequential part (n requests)
 * @property {Spent & { done: number, seconds: number }} conc the concurrent part
 */

async function main() {
  const dataDir = tempDir('cs-bappr-')
  const policyFile = path.join(dataDir, 'policy.json')
  writeFileSync(policyFile, JSON.stringify({ maxTxPerHour: 1_000_000_000, requireApprovalAbove: { valueWei: '1' } }))
  await importKeys(dataDir, [devKeys[0]])
  // One wallet per request in flight, as in the pipeline's 8 × 8 (the approver caps pending requests per wallet).
  const wallets = devKeys.map((k) => privateKeyToAccount(k).address)
  const env = { SERVICE_DATA_DIR: dataDir, SERVICE_POLICY_FILE: policyFile, SERVICE_DEMO_PASSPHRASE: PASSPHRASE, SERVICE_LOG_LEVEL: 'warn' }
  const signer = await spawnReady(path.join(root, 'services/signer/dist/main.js'), env, /signer ready/)
  const entries = [{ name: 'this build', entry: path.join(root, 'services/approver/dist/main.js') }]
  for (const entry of (process.env.APPROVER_AB ?? '').split(',').filter(Boolean)) entries.push({ name: `A/B ${entry}`, entry })
  const audit = openAuditLog(path.join(dataDir, 'audit.db'))
  // The approver holds a lock on its data directory, so the builds take turns:
  // each round starts one build's approver, measures it and stops it, then the next's.
  /** @type {Build[]} */
  const builds = entries.map(({ name, entry }) => ({
    name,
    entry,
    seq: [],
    cpu: { loop: 0, others: 0, signer: 0, n: 0, rows: 0 },
    conc: { done: 0, seconds: 0, loop: 0, others: 0, signer: 0 },
  }))
  let spawned = 0
  /**
   * Starts b's approver, warms it up, runs `work`, and stops it.
   * @param {Build} b
   * @param {(proc: import('./lib.mjs').Stoppable, client: import('@countersign/shared').RpcClient) => Promise<void>} work
   */
  const withApprover = async (b, work) => {
    const socket = path.join(dataDir, 'run', `approver-${spawned}.sock`)
    const proc = await spawnReady(
      b.entry,
      { ...env, SERVICE_APPROVAL_MODE: 'auto', SERVICE_APPROVER_PORT: String(await freePort()), SERVICE_APPROVER_SOCKET: socket },
      /approver ready/,
      profileArgs(`approver-bench-${builds.indexOf(b)}-${spawned++}`),
    )
    const client = createRpcClient({ socketPath: socket, timeoutMs: 10_000 })
    try {
      for (let i = 0; i < 50; i++) await ask(client) // warm-up
      await work(proc, client)
    } finally {
      client.close()
      await proc.stop()
    }
  }
  let n = 0
  /**
   * @param {import('@countersign/shared').RpcClient} client
   * @param {number} [w] the wallet's index
   */
  const ask = async (client, w = 0) => {
    /** @type {import('@countersign/shared').ApprovalTicket} */
    const t = await client.call(approverMethods.requestApproval, paramsFor(nth(wallets, w), n++))
    if (t.state !== 'decided' || !t.outcome.approved) throw new Error(`not approved: ${JSON.stringify(t)}`)
  }
  /**
   * Runs `work` against an approver, adding its CPU (approver threads, signer) and audit rows to `acc`.
   * @param {import('./lib.mjs').Stoppable} proc
   * @param {Spent} acc
   * @param {() => Promise<number>} work resolves to the number of requests it made
   * @returns {Promise<number>} that number
   */
  const measured = async (proc, acc, work) => {
    const a0 = threadCpuMs(proc.pid)
    const s0 = threadCpuMs(signer.pid)
    const r0 = audit.head().seq
    const count = await work()
    const a = cpuPerRequest(proc.pid, a0, threadCpuMs(proc.pid), count)
    const s = cpuPerRequest(signer.pid, s0, threadCpuMs(signer.pid), count)
    if (!a || !s) throw new Error('no CPU figures: none of the requests completed, or /proc/<pid>/task is missing (Linux only)')
    acc.loop += a.loopUs * count
    acc.others += a.othersUs * count
    acc.signer += (s.loopUs + s.othersUs) * count
    acc.rows = (acc.rows ?? 0) + (audit.head().seq - r0)
    return count
  }
  try {
    for (let r = 0; r < ROUNDS; r++) {
      for (const b of r % 2 === 0 ? builds : [...builds].reverse()) {
        await withApprover(b, async (proc, client) => {
          b.cpu.n += await measured(proc, b.cpu, async () => {
            for (let i = 0; i < PER_ROUND; i++) {
              const t0 = performance.now()
              await ask(client)
              b.seq.push(performance.now() - t0)
            }
            return PER_ROUND
          })
        })
      }
    }
    for (let r = 0; r < (process.env.APPROVER_SEQUENTIAL_ONLY ? 0 : 2); r++) {
      for (const b of r % 2 === 0 ? builds : [...builds].reverse()) {
        await withApprover(b, async (proc, client) => {
          const started = performance.now()
          const end = Date.now() + 3000
          const done = await measured(proc, b.conc, async () => {
            let count = 0
            await Promise.all(
              Array.from({ length: CONCURRENCY }, async (_, w) => {
                while (Date.now() < end) {
                  await ask(client, w)
                  count++
                }
              }),
            )
            return count
          })
          b.conc.done += done
          b.conc.seconds += (performance.now() - started) / 1000
        })
      }
    }
  } finally {
    await signer.stop()
    await audit.close()
  }
  const load = os.loadavg().map((l) => fmt(l, 2)).join(' ')
  console.log(`\napprover hop: requestApproval on approver.sock, auto mode, real signer and audit.db; ${ROUNDS} interleaved rounds of ${PER_ROUND} sequential, then 2 × 3 s with ${CONCURRENCY} in flight (load avg ${load})`)
  for (const b of builds) {
    const q = quantiles(b.seq)
    const c = b.cpu
    const k = b.conc
    console.log(`  ${b.name}`)
    console.log(
      `    sequential  p50 ${fmt(q.p50, 3)} ms  p99 ${fmt(q.p99, 3)} ms   CPU per request: approver ${fmt(c.loop / c.n)} µs loop + ${fmt(c.others / c.n)} µs other threads, signer ${fmt(c.signer / c.n)} µs; audit rows per request ${fmt(c.rows / c.n, 2)}`,
    )
    if (k.done) console.log(
      `    ${CONCURRENCY} in flight  ${fmt(k.done / k.seconds, 0)} requests/s   CPU per request: approver ${fmt(k.loop / k.done)} µs loop + ${fmt(k.others / k.done)} µs other threads, signer ${fmt(k.signer / k.done)} µs`,
    )
  }
}

await main()
process.exit(0)
