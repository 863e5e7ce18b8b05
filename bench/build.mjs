// POST /v1/tx/build on the real gateway (audit on, default durability) against
// a bare fastify route, both at 32 connections, in the same run.
import { randomBytes, randomUUID } from 'node:crypto'
import os from 'node:os'
import path from 'node:path'
import { cpuPerRequest, fmt, freePort, load, profileArgs, ratio, root, startNode, tempDir, threadCpuMs } from './lib.mjs'

/** Many agents, each with its own wallet, under the default policy (at most 10 per wallet per hour). */
function intentBody() {
  const now = Math.floor(Date.now() / 1000)
  return JSON.stringify({
    version: '1',
    id: randomUUID(),
    timestamp: now,
    chain: { type: 'evm', chainId: 8453 },
    wallet: { address: `0x${randomBytes(20).toString('hex')}` },
    action: {
      type: 'transfer',
      asset: { kind: 'erc20', address: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', symbol: 'USDC', decimals: 6 },
      to: '0x2222222222222222222222222222222222222222',
      amount: '5000000',
    },
    constraints: { maxGasWei: '1000000000000000', deadline: now + 3600, maxSlippageBps: 0 },
  })
}

/**
 * One gateway build (`entry`, its dist/main.js) under the build load: its rate and its CPU per build.
 * @param {string} entry
 * @param {number} duration seconds
 * @param {string | undefined} profileName BENCH_CPU_PROF's folder name, if profiled
 * @param {string[]} [nodeArgs]
 */
async function loadGateway(entry, duration, profileName, nodeArgs = []) {
  const port = await freePort()
  const gw = await startNode(entry, {
    env: { SERVICE_PORT: String(port), SERVICE_DATA_DIR: tempDir(), SERVICE_LOG_LEVEL: 'warn' },
    url: `http://127.0.0.1:${port}/v1/health`,
    nodeArgs: [...(profileName ? profileArgs(profileName) : []), ...nodeArgs],
  })
  try {
    const before = threadCpuMs(gw.pid)
    const result = await load({
      url: `http://127.0.0.1:${port}/v1/tx/build`,
      duration,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      requests: [{ setupRequest: (req) => ({ ...req, body: intentBody() }) }],
    })
    return { result, cpu: cpuPerRequest(gw.pid, before, threadCpuMs(gw.pid), result.total) }
  } finally {
    await gw.stop()
  }
}

/**
 * BUILD_AB_GATEWAY=<other gateway dist/main.js>: this build and that one in
 * alternating rounds (BUILD_AB_ROUNDS, default 4, of 5 s), so that a change is
 * judged by CPU per build measured side by side on a machine that drifts.
 * BUILD_AB_NODE_ARGS (space-separated) starts B's node with those flags: the
 * same build twice, with and without a V8 or Node option.
 * @param {string} other
 * @param {number} rounds
 */
async function abRounds(other, rounds) {
  const otherArgs = (process.env.BUILD_AB_NODE_ARGS ?? '').split(' ').filter(Boolean)
  const here = path.join(root, 'services/gateway/dist/main.js')
  const sums = { here: { rps: 0, loop: 0, others: 0 }, other: { rps: 0, loop: 0, others: 0 } }
  console.log(`\nA/B: ${here} (A) against ${other}${otherArgs.length ? ` with ${otherArgs.join(' ')}` : ''} (B), ${rounds} alternating rounds of 5 s`)
  for (let i = 0; i < rounds; i++) {
    /** @type {['here' | 'other', string][]} */
    const order = i % 2 === 0 ? [['here', here], ['other', other]] : [['other', other], ['here', here]]
    for (const [name, entry] of order) {
      const { result, cpu } = await loadGateway(entry, 5, undefined, name === 'other' ? otherArgs : [])
      sums[name].rps += result.rps
      sums[name].loop += cpu?.loopUs ?? NaN
      sums[name].others += cpu?.othersUs ?? NaN
      console.log(`  round ${i + 1} ${name === 'here' ? 'A' : 'B'}  ${fmt(result.rps).padStart(7)} req/s  ${fmt(cpu?.loopUs)} µs event loop + ${fmt(cpu?.othersUs)} µs other threads per build  (load ${os.loadavg()[0]?.toFixed(2)})`)
    }
  }
  for (const [name, s] of Object.entries(sums)) {
    console.log(`  mean ${name === 'here' ? 'A' : 'B'}  ${fmt(s.rps / rounds).padStart(7)} req/s  ${fmt(s.loop / rounds)} + ${fmt(s.others / rounds)} µs per build`)
  }
}

/**
 * The bare route and the gateway both stay up, and the load alternates between
 * them in rounds (BUILD_ROUNDS, default 4, of BUILD_ROUND_S seconds, default 4;
 * the first of each pair alternates too), so a machine that drifts within the
 * run slows both alike. The ratio is of the totals over all rounds.
 * @param {{ rounds?: number, duration?: number }} [opts] duration: seconds per round
 */
export async function benchBuild({ rounds = Number(process.env.BUILD_ROUNDS ?? 4), duration = Number(process.env.BUILD_ROUND_S ?? 4) } = {}) {
  if (process.env.BUILD_AB_GATEWAY) return abRounds(process.env.BUILD_AB_GATEWAY, Number(process.env.BUILD_AB_ROUNDS ?? 4))

  const barePort = await freePort()
  const gatewayPort = await freePort()
  const bare = await startNode(path.join(root, 'bench/bare-server.mjs'), {
    env: { PORT: String(barePort) },
    url: `http://127.0.0.1:${barePort}/ready`,
  })
  let gw
  try {
    gw = await startNode(path.join(root, 'services/gateway/dist/main.js'), {
      env: { SERVICE_PORT: String(gatewayPort), SERVICE_DATA_DIR: tempDir(), SERVICE_LOG_LEVEL: 'warn' },
      url: `http://127.0.0.1:${gatewayPort}/v1/health`,
      nodeArgs: profileArgs('gateway-build'),
    })
    const loadOf = (/** @type {string} */ url, /** @type {number} */ seconds) =>
      load({ url, duration: seconds, method: 'POST', headers: { 'content-type': 'application/json' }, requests: [{ setupRequest: (req) => ({ ...req, body: intentBody() }) }] })
    const bareUrl = `http://127.0.0.1:${barePort}/bare`
    const buildUrl = `http://127.0.0.1:${gatewayPort}/v1/tx/build`
    // JIT warm-up of both, not counted.
    await loadOf(bareUrl, 1)
    await loadOf(buildUrl, 1)

    /** @typedef {{ total: number, rps: number, p50: number[], p99: number[] }} Totals */
    /** @type {{ bare: Totals, build: Totals & { non2xx: number, errors: number }, loopMs: number, othersMs: number }} */
    const sum = { bare: { total: 0, rps: 0, p50: [], p99: [] }, build: { total: 0, rps: 0, p50: [], p99: [], non2xx: 0, errors: 0 }, loopMs: 0, othersMs: 0 }
    /**
     * @param {Totals} into
     * @param {import('./lib.mjs').LoadResult} r
     */
    const add = (into, r) => {
      into.total += r.total
      into.rps += r.rps / rounds
      into.p50.push(r.p50)
      into.p99.push(r.p99)
    }
    console.log(`\nPOST /v1/tx/build vs bare fastify route, 32 connections, ${rounds} alternating rounds of ${duration} s each`)
    for (let i = 0; i < rounds; i++) {
      /** @type {{ bare?: import('./lib.mjs').LoadResult, build?: import('./lib.mjs').LoadResult, cpu?: import('./lib.mjs').CpuPerRequest }} */
      const line = {}
      for (const which of i % 2 === 0 ? ['bare', 'build'] : ['build', 'bare']) {
        if (which === 'bare') {
          line.bare = await loadOf(bareUrl, duration)
          add(sum.bare, line.bare)
        } else {
          const before = threadCpuMs(gw.pid)
          const build = await loadOf(buildUrl, duration)
          line.build = build
          const cpu = cpuPerRequest(gw.pid, before, threadCpuMs(gw.pid), build.total)
          add(sum.build, build)
          sum.build.non2xx += build.non2xx
          sum.build.errors += build.errors
          if (cpu) {
            sum.loopMs += (cpu.loopUs * build.total) / 1000
            sum.othersMs += (cpu.othersUs * build.total) / 1000
            line.cpu = cpu
          }
        }
      }
      const { bare: bareLine, build: buildLine } = line
      if (!bareLine || !buildLine) throw new Error('a round without both loads') // each round runs both, in one order or the other
      const cpuText = line.cpu ? `, ${fmt(line.cpu.loopUs)} + ${fmt(line.cpu.othersUs)} µs per build` : ''
      console.log(`  round ${i + 1}  bare ${fmt(bareLine.rps).padStart(7)} req/s  build ${fmt(buildLine.rps).padStart(7)} req/s  ${fmt(ratio(buildLine.rps, bareLine.rps) * 100, 1)} %${cpuText}  (load ${os.loadavg()[0]?.toFixed(2)})`)
    }
    const median = (/** @type {number[]} */ xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
    const r = ratio(sum.build.total, sum.bare.total)
    console.log(`  bare fastify route   ${fmt(sum.bare.rps).padStart(8)} req/s   p50 ${median(sum.bare.p50)} ms  p99 ${median(sum.bare.p99)} ms  (mean of the rounds; median p50/p99)`)
    console.log(`  /v1/tx/build         ${fmt(sum.build.rps).padStart(8)} req/s   p50 ${median(sum.build.p50)} ms  p99 ${median(sum.build.p99)} ms  (non-2xx ${sum.build.non2xx}, errors ${sum.build.errors})`)
    console.log(`  ratio build / bare   ${fmt(r * 100, 1)} %   (goal: >= 40 %; requests over all rounds)`)
    if (sum.build.total > 0 && sum.loopMs > 0) {
      console.log(`  gateway CPU per build  ${fmt((sum.loopMs * 1000) / sum.build.total)} µs on the event loop, ${fmt((sum.othersMs * 1000) / sum.build.total)} µs on other threads (audit writer, GC)`)
    }
    if (sum.build.non2xx > 0 || sum.build.errors > 0) throw new Error('build benchmark saw failed requests')
    return { bare: sum.bare, build: sum.build, ratio: r }
  } finally {
    await gw?.stop()
    await bare.stop()
  }
}
