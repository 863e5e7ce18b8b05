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

/** One gateway build (`entry`, its dist/main.js) under the build load: its rate and its CPU per build. */
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
 */
async function abRounds(other, rounds) {
  const otherArgs = (process.env.BUILD_AB_NODE_ARGS ?? '').split(' ').filter(Boolean)
  const here = path.join(root, 'services/gateway/dist/main.js')
  const sums = { here: { rps: 0, loop: 0, others: 0 }, other: { rps: 0, loop: 0, others: 0 } }
  console.log(`\nA/B: ${here} (A) against ${other}${otherArgs.length ? ` with ${otherArgs.join(' ')}` : ''} (B), ${rounds} alternating rounds of 5 s`)
  for (let i = 0; i < rounds; i++) {
    for (const [name, entry] of i % 2 === 0 ? [['here', here], ['other', other]] : [['other', other], ['here', here]]) {
      const { result, cpu } = await loadGateway(entry, 5, undefined, name === 'other' ? otherArgs : [])
      sums[name].rps += result.rps
      sums[name].loop += cpu?.loopUs ?? NaN
      sums[name].others += cpu?.othersUs ?? NaN
      console.log(`  round ${i + 1} ${name === 'here' ? 'A' : 'B'}  ${fmt(result.rps).padStart(7)} req/s  ${fmt(cpu?.loopUs)} µs event loop + ${fmt(cpu?.othersUs)} µs other threads per build  (load ${os.loadavg()[0].toFixed(2)})`)
    }
  }
  for (const [name, s] of Object.entries(sums)) {
    console.log(`  mean ${name === 'here' ? 'A' : 'B'}  ${fmt(s.rps / rounds).padStart(7)} req/s  ${fmt(s.loop / rounds)} + ${fmt(s.others / rounds)} µs per build`)
  }
}

export async function benchBuild({ duration = 8 } = {}) {
  if (process.env.BUILD_AB_GATEWAY) return abRounds(process.env.BUILD_AB_GATEWAY, Number(process.env.BUILD_AB_ROUNDS ?? 4))

  const barePort = await freePort()
  const bare = await startNode(path.join(root, 'bench/bare-server.mjs'), {
    env: { PORT: String(barePort) },
    url: `http://127.0.0.1:${barePort}/ready`,
  })
  let bareResult
  try {
    bareResult = await load({
      url: `http://127.0.0.1:${barePort}/bare`,
      duration,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      requests: [{ setupRequest: (req) => ({ ...req, body: intentBody() }) }],
    })
  } finally {
    await bare.stop()
  }

  const { result: buildResult, cpu } = await loadGateway(path.join(root, 'services/gateway/dist/main.js'), duration, 'gateway-build')
  const r = ratio(buildResult.rps, bareResult.rps)
  console.log('\nPOST /v1/tx/build vs bare fastify route, 32 connections')
  console.log(`  bare fastify route   ${fmt(bareResult.rps).padStart(8)} req/s   p50 ${bareResult.p50} ms  p99 ${bareResult.p99} ms`)
  console.log(`  /v1/tx/build         ${fmt(buildResult.rps).padStart(8)} req/s   p50 ${buildResult.p50} ms  p99 ${buildResult.p99} ms  (non-2xx ${buildResult.non2xx}, errors ${buildResult.errors})`)
  console.log(`  ratio build / bare   ${fmt(r * 100, 1)} %   (goal: >= 40 %)`)
  if (cpu) console.log(`  gateway CPU per build  ${fmt(cpu.loopUs)} µs on the event loop, ${fmt(cpu.othersUs)} µs on other threads (audit writer, GC)`)
  if (buildResult.non2xx > 0 || buildResult.errors > 0) throw new Error('build benchmark saw failed requests')
  return { bare: bareResult, build: buildResult, ratio: r }
}
