// POST /v1/tx/build on the real gateway (audit on, default durability) against
// a bare fastify route, both at 32 connections, in the same run.
import { randomBytes, randomUUID } from 'node:crypto'
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

export async function benchBuild({ duration = 8 } = {}) {
  const dataDir = tempDir()

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

  const port = await freePort()
  const gw = await startNode(path.join(root, 'services/gateway/dist/main.js'), {
    env: { SERVICE_PORT: String(port), SERVICE_DATA_DIR: dataDir, SERVICE_LOG_LEVEL: 'warn' },
    url: `http://127.0.0.1:${port}/v1/health`,
    nodeArgs: profileArgs('gateway-build'),
  })
  let buildResult
  let cpu = null
  try {
    const before = threadCpuMs(gw.pid)
    buildResult = await load({
      url: `http://127.0.0.1:${port}/v1/tx/build`,
      duration,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      requests: [{ setupRequest: (req) => ({ ...req, body: intentBody() }) }],
    })
    cpu = cpuPerRequest(gw.pid, before, threadCpuMs(gw.pid), buildResult.total)
  } finally {
    await gw.stop()
  }
  const r = ratio(buildResult.rps, bareResult.rps)
  console.log('\nPOST /v1/tx/build vs bare fastify route, 32 connections')
  console.log(`  bare fastify route   ${fmt(bareResult.rps).padStart(8)} req/s   p50 ${bareResult.p50} ms  p99 ${bareResult.p99} ms`)
  console.log(`  /v1/tx/build         ${fmt(buildResult.rps).padStart(8)} req/s   p50 ${buildResult.p50} ms  p99 ${buildResult.p99} ms  (non-2xx ${buildResult.non2xx}, errors ${buildResult.errors})`)
  console.log(`  ratio build / bare   ${fmt(r * 100, 1)} %   (goal: >= 40 %)`)
  if (cpu) console.log(`  gateway CPU per build  ${fmt(cpu.loopUs)} µs on the event loop, ${fmt(cpu.othersUs)} µs on other threads (audit writer, GC)`)
  if (buildResult.non2xx > 0 || buildResult.errors > 0) throw new Error('build benchmark saw failed requests')
  return { bare: bareResult, build: buildResult, ratio: r }
}
