// The whole approval pipeline of a native transfer against anvil (automine):
// approve-request (auto approval) → sign-and-send → receipt, against a BARE
// pipeline that makes the same chain calls directly with viem and a local
// account, measured in the same run (issue 17, goals 2 and 3).
//
// Bare pipeline, per transfer: eth_simulateV1 (the simulation before
// approval); then, in parallel, the latest block and eth_maxPriorityFeePerGas
// (fee read), the pending nonce and eth_estimateGas; a local signature;
// eth_sendRawTransaction; the receipt polled every POLL_MS. countersign's
// client polls the receipt the same way, straight from the node.
//
// The sequential part also runs two guarantees-only floors (bench/floor-gateway.mjs,
// bench/floor-signer.mjs): the same two HTTP calls and the bare pipeline's
// chain calls, a separate signer process behind a Unix socket, and nothing else
// but the durable points: the one the issue names (token consumption and
// signature record, with an audit row, in one fsync; the reads signing needs
// sent with the simulation), or countersign's three in a row (the token before
// anyone holds it, the signature, the broadcast's audit row; the nonce and gas
// read again at signing, as countersign does). Neither has an approver process,
// policy, risk scoring or input checks. They show how near goal 2's ratio an
// implementation doing only that work comes on the machine at hand.
//
// The arms run interleaved in rounds (each against its own fresh anvil) so a
// machine that drifts during the run slows them alike.
import { randomUUID } from 'node:crypto'
import os from 'node:os'
import { createPublicClient, defineChain, http } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { cpuPerRequest, fmt, nth, profileArgs, threadCpuMs } from './lib.mjs'
import { transferIntent } from './signing.mjs'
import { devKeys, startAnvil, startFloor, startStack } from './stack.mjs'

const POLL_MS = 5
const CHAIN_ID = 8453
/** @type {import('viem').Address} */
const TO = '0x000000000000000000000000000000000000bEEF'
/** Every transfer needs an approval (auto mode grants it); no rate limit in the way. */
const POLICY = { maxTxPerHour: 1_000_000_000, requireApprovalAbove: { valueWei: '1' } }

const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, ms))

/** @param {string} rpcUrl */
function publicClient(rpcUrl) {
  const chain = defineChain({ id: CHAIN_ID, name: 'anvil', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [rpcUrl] } } })
  return createPublicClient({ chain, transport: http(rpcUrl), cacheTime: 0 })
}

/**
 * @typedef {ReturnType<typeof publicClient>} Client
 * @typedef {object} Run one transfer, timed
 * @property {Record<string, number>} phases ms
 * @property {number} total ms
 * @property {import('viem').Hash} hash
 * @property {import('viem').Address} wallet
 * @typedef {Run & { gateway: { approve: Record<string, number>, sign: Record<string, number> } }} CountersignRun
 *   with the gateway's Server-Timing phases of its two calls
 */

/**
 * The receipt, polled every POLL_MS until the node has one.
 * @param {Client} client
 * @param {import('viem').Hash} hash
 */
async function pollReceipt(client, hash) {
  for (;;) {
    const r = await client.request({ method: 'eth_getTransactionReceipt', params: [hash] })
    if (r) return r
    await sleep(POLL_MS)
  }
}

/** @param {number[]} samples */
function quantiles(samples) {
  const s = [...samples].sort((a, b) => a - b)
  const q = (/** @type {number} */ p) => s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? NaN
  return { p50: q(0.5), p99: q(0.99), n: s.length }
}

/**
 * One bare transfer; returns per-phase ms.
 * @param {Client} client
 * @param {import('viem').PrivateKeyAccount} account
 * @param {number} n
 * @returns {Promise<Run>}
 */
async function barePipeline(client, account, n) {
  const t0 = performance.now()
  const value = 1000n + BigInt(n)
  /** @type {import('viem').RpcTransactionRequest} */
  const call = { from: account.address, to: TO, data: '0x', value: `0x${value.toString(16)}` }
  const [sim] = await client.request({ method: 'eth_simulateV1', params: [{ blockStateCalls: [{ calls: [call] }], traceTransfers: true, validation: false }, 'latest'] })
  if (sim?.calls[0]?.status !== '0x1') throw new Error('bare simulation failed')
  const t1 = performance.now()
  const [block, tip, nonce, gas] = await Promise.all([
    client.getBlock({ blockTag: 'latest' }),
    client.estimateMaxPriorityFeePerGas(),
    client.getTransactionCount({ address: account.address, blockTag: 'pending' }),
    client.estimateGas({ account: account.address, to: TO, data: '0x', value }),
  ])
  const t2 = performance.now()
  if (block.baseFeePerGas === null) throw new Error('the latest block has no base fee (anvil runs post-London)')
  const signedTx = await account.signTransaction({ type: 'eip1559', chainId: CHAIN_ID, nonce, to: TO, value, gas, maxFeePerGas: block.baseFeePerGas * 2n + tip, maxPriorityFeePerGas: tip })
  const t3 = performance.now()
  const hash = await client.request({ method: 'eth_sendRawTransaction', params: [signedTx] })
  const t4 = performance.now()
  const receipt = await pollReceipt(client, hash)
  if (receipt.status !== '0x1') throw new Error('bare transfer reverted')
  const t5 = performance.now()
  return { phases: { simulate: t1 - t0, 'fees+nonce+gas': t2 - t1, sign: t3 - t2, send: t4 - t3, receipt: t5 - t4 }, total: t5 - t0, hash, wallet: account.address }
}

/**
 * @param {string} url
 * @param {object} body sent as JSON
 * @returns {Promise<{ status: number, body: unknown, timing: Record<string, number> }>}
 */
async function post(url, body) {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  return { status: r.status, body: await r.json(), timing: parseServerTiming(r.headers.get('server-timing')) }
}

/**
 * The gateway's Server-Timing header (SERVICE_SERVER_TIMING=on) as { phase: ms }; {} without one.
 * @param {string | null} header
 * @returns {Record<string, number>}
 */
function parseServerTiming(header) {
  /** @type {Record<string, number>} */
  const phases = {}
  for (const metric of header ? header.split(', ') : []) {
    const [name, dur] = metric.split(';dur=')
    if (name !== undefined) phases[name] = Number(dur)
  }
  return phases
}

/**
 * p50 of each gateway phase over the runs, in the order the route marks them: "build 0.14, preflight 1.51, …".
 * @param {Record<string, number>[]} timings
 */
function serverPhaseSummary(timings) {
  const names = Object.keys(timings[0] ?? {})
  return names.map((name) => `${name} ${fmt(quantiles(timings.map((t) => t[name] ?? NaN)).p50, 2)}`).join(', ')
}

/**
 * One transfer through countersign; returns per-phase ms.
 * @param {{ url: string | null }} stack
 * @param {Client} client
 * @param {import('viem').Address} wallet
 * @param {number} n
 * @returns {Promise<CountersignRun>}
 */
async function countersignPipeline(stack, client, wallet, n) {
  const intent = transferIntent(wallet, n)
  const t0 = performance.now()
  const approved = await post(`${stack.url}/v1/tx/approve-request`, intent)
  const approval = /** @type {Partial<import('@countersign/shared').ApprovalResult>} */ (approved.body)
  if (approved.status !== 200 || !approval.approvalTokenId) throw new Error(`approve-request: ${approved.status} ${JSON.stringify(approved.body)}`)
  const t1 = performance.now()
  const sent = await post(`${stack.url}/v1/tx/sign-and-send`, { intent, approvalTokenId: approval.approvalTokenId })
  const sending = /** @type {Partial<import('@countersign/shared').SignAndSendResult>} */ (sent.body)
  if (sent.status !== 200 || !sending.broadcast || !sending.txHash) throw new Error(`sign-and-send: ${sent.status} ${JSON.stringify(sent.body)}`)
  const t2 = performance.now()
  const receipt = await pollReceipt(client, sending.txHash)
  if (receipt.status !== '0x1') throw new Error('transfer reverted')
  const t3 = performance.now()
  return { phases: { 'approve-request': t1 - t0, 'sign-and-send': t2 - t1, receipt: t3 - t2 }, total: t3 - t0, hash: sending.txHash, wallet, gateway: { approve: approved.timing, sign: sent.timing } }
}

/**
 * One transfer through the guarantees-only floor (bench/floor-gateway.mjs): the
 * same two HTTP calls and receipt poll as countersignPipeline, against a
 * gateway and signer that do only what the guarantees cost.
 * @param {{ url: string }} floor
 * @param {Client} client
 * @param {import('viem').Address} wallet
 * @param {number} n
 * @returns {Promise<CountersignRun>} `gateway`: the floor gateway's own timers (ms), from its answers
 */
async function floorPipeline(floor, client, wallet, n) {
  const transfer = { from: wallet, to: TO, value: String(1000 + n) }
  const t0 = performance.now()
  const approved = await post(`${floor.url}/approve`, transfer)
  const { tokenId, phases: inApprove = {} } = /** @type {{ tokenId?: string, phases?: Record<string, number> }} */ (approved.body)
  if (approved.status !== 200 || !tokenId) throw new Error(`floor approve: ${approved.status} ${JSON.stringify(approved.body)}`)
  const t1 = performance.now()
  const sent = await post(`${floor.url}/send`, { ...transfer, tokenId, intentId: randomUUID() })
  const { txHash, phases: inSend = {} } = /** @type {{ txHash?: import('viem').Hash, phases?: Record<string, number> }} */ (sent.body)
  if (sent.status !== 200 || !txHash) throw new Error(`floor send: ${sent.status} ${JSON.stringify(sent.body)}`)
  const t2 = performance.now()
  const receipt = await pollReceipt(client, txHash)
  if (receipt.status !== '0x1') throw new Error('floor transfer reverted')
  const t3 = performance.now()
  return { phases: { approve: t1 - t0, send: t2 - t1, receipt: t3 - t2 }, total: t3 - t0, hash: txHash, wallet, gateway: { approve: inApprove, sign: inSend } }
}

/**
 * Each wallet's transactions must carry nonces 0..n-1 with no gap or repeat, and the chain must agree.
 * @param {Client} client
 * @param {Run[]} results
 * @returns {Promise<string[]>} a line per wallet
 */
async function assertContiguousNonces(client, results) {
  /** @type {Map<import('viem').Address, import('viem').Hash[]>} */
  const byWallet = new Map()
  for (const r of results) byWallet.set(r.wallet, [...(byWallet.get(r.wallet) ?? []), r.hash])
  const lines = []
  for (const [wallet, hashes] of byWallet) {
    const nonces = (await Promise.all(hashes.map((hash) => client.getTransaction({ hash })))).map((t) => t.nonce).sort((a, b) => a - b)
    const onChain = await client.getTransactionCount({ address: wallet, blockTag: 'latest' })
    const contiguous = nonces.every((x, i) => x === i) && onChain === nonces.length
    lines.push(`${wallet.slice(0, 8)}… ${nonces.length} txs, nonces 0..${nonces.length - 1}${contiguous ? '' : ' NOT CONTIGUOUS'}`)
    if (!contiguous) throw new Error(`nonces of ${wallet} are not contiguous: [${nonces.join(',')}], chain count ${onChain}`)
  }
  return lines
}

/**
 * p50/p99 of each phase over the runs: "simulate 1.20/3.40".
 * @param {Run[]} results
 */
function phaseSummary(results) {
  const names = Object.keys(results[0]?.phases ?? {})
  return names.map((name) => {
    const q = quantiles(results.map((r) => r.phases[name] ?? NaN))
    return `${name} ${fmt(q.p50, 2)}/${fmt(q.p99, 2)}`
  })
}

const load = () => os.loadavg().map((l) => fmt(l, 2)).join(' ')

/**
 * @typedef {{ gateway?: string[], approver?: string[], signer?: string[] }} NodeArgs node flags per service
 */

/**
 * @param {object} opts
 * @param {number} opts.rounds
 * @param {number} opts.perRound
 * @param {number} opts.warmup transfers of each kind not counted
 * @param {NodeArgs} opts.nodeArgs
 * @param {string | undefined} opts.abGateway
 * @param {string | undefined} opts.abRoot
 */
async function sequential({ rounds, perRound, warmup, nodeArgs, abGateway, abRoot }) {
  const anvilBare = await startAnvil(CHAIN_ID)
  const anvilCs = await startAnvil(CHAIN_ID)
  const ab = abGateway || abRoot ? { ...(abGateway ? { gatewayEntry: abGateway } : {}), ...(abRoot ? { servicesRoot: abRoot } : {}) } : null
  const anvilAb = ab ? await startAnvil(CHAIN_ID) : null
  const bareClient = publicClient(anvilBare.rpcUrl)
  const csClient = publicClient(anvilCs.rpcUrl)
  const abClient = anvilAb ? publicClient(anvilAb.rpcUrl) : null
  const account = privateKeyToAccount(devKeys[0])
  // The gateway's own per-phase timers, as Server-Timing headers (printed below).
  const env = { SERVICE_SERVER_TIMING: 'on' }
  const stack = await startStack({ keys: [devKeys[0]], rpcUrl: anvilCs.rpcUrl, policy: POLICY, approver: 'auto', nodeArgs, env })
  const abStack = anvilAb ? await startStack({ keys: [devKeys[0]], rpcUrl: anvilAb.rpcUrl, policy: POLICY, approver: 'auto', ...ab, env }) : null
  const abArm = abStack && abClient ? { stack: abStack, client: abClient } : null
  // The guarantees-only floors, each against its own anvil: what goal 2's ratio
  // would be for a pipeline that did nothing but keep the guarantees.
  const floors = await Promise.all(
    [false, true].map(async (durable) => {
      const anvil = await startAnvil(CHAIN_ID)
      // The issue's letter at its cheapest (reads sent with the simulation); countersign's durable points with its reads at signing.
      const floor = await startFloor({ key: devKeys[0], rpcUrl: anvil.rpcUrl, chainId: CHAIN_ID, durable, prefetch: !durable })
      /** @type {CountersignRun[]} */
      const runs = []
      return { durable, anvil, floor, client: publicClient(anvil.rpcUrl), runs }
    }),
  )
  /** @type {Run[]} */
  const bare = []
  /** @type {CountersignRun[]} */
  const cs = []
  /** @type {CountersignRun[]} */
  const abRuns = []
  let n = 0
  try {
    for (let i = 0; i < warmup; i++) {
      await barePipeline(bareClient, account, n++)
      await countersignPipeline(stack, csClient, account.address, n++)
      if (abArm) await countersignPipeline(abArm.stack, abArm.client, account.address, n++)
      for (const f of floors) await floorPipeline(f.floor, f.client, account.address, n++)
    }
    /** @type {(() => Promise<void>)[]} each arm's share of a round */
    const arms = [
      async () => void bare.push(await barePipeline(bareClient, account, n++)),
      async () => void cs.push(await countersignPipeline(stack, csClient, account.address, n++)),
      ...(abArm ? [async () => void abRuns.push(await countersignPipeline(abArm.stack, abArm.client, account.address, n++))] : []),
      ...floors.map((f) => async () => void f.runs.push(await floorPipeline(f.floor, f.client, account.address, n++))),
    ]
    for (let r = 0; r < rounds; r++) {
      // Each round starts with another arm, so none always follows the same one.
      for (let a = 0; a < arms.length; a++) {
        const arm = /** @type {() => Promise<void>} */ (arms[(a + r) % arms.length])
        for (let i = 0; i < perRound; i++) await arm()
      }
    }
  } finally {
    await stack.stop()
    await abStack?.stop()
    for (const f of floors) {
      await f.floor.stop()
      f.anvil.stop()
    }
    anvilBare.stop()
    anvilCs.stop()
    anvilAb?.stop()
  }
  const b = quantiles(bare.map((r) => r.total))
  const c = quantiles(cs.map((r) => r.total))
  console.log(`\nsequential pipeline, native transfer, anvil automine, receipt polled every ${POLL_MS} ms, ${rounds} interleaved rounds of ${perRound} (load avg ${load()})`)
  console.log(`  bare viem + local key   p50 ${fmt(b.p50, 2).padStart(6)} ms  p99 ${fmt(b.p99, 2).padStart(6)} ms   (p50/p99 ms: ${phaseSummary(bare).join(', ')})`)
  console.log(`  countersign (auto)      p50 ${fmt(c.p50, 2).padStart(6)} ms  p99 ${fmt(c.p99, 2).padStart(6)} ms   (p50/p99 ms: ${phaseSummary(cs).join(', ')})`)
  console.log(`    in the gateway (Server-Timing, p50 ms): approve-request ${serverPhaseSummary(cs.map((r) => r.gateway.approve))}`)
  console.log(`                                            sign-and-send ${serverPhaseSummary(cs.map((r) => r.gateway.sign))}`)
  if (abStack) {
    const a = quantiles(abRuns.map((r) => r.total))
    console.log(`  A/B: ${abRoot ? `services of ${abRoot}` : ''}${abGateway ? ` gateway ${abGateway}` : ''}   p50 ${fmt(a.p50, 2).padStart(6)} ms  p99 ${fmt(a.p99, 2).padStart(6)} ms   (p50/p99 ms: ${phaseSummary(abRuns).join(', ')})`)
    console.log(`    in the gateway (Server-Timing, p50 ms): approve-request ${serverPhaseSummary(abRuns.map((r) => r.gateway.approve))}`)
    console.log(`                                            sign-and-send ${serverPhaseSummary(abRuns.map((r) => r.gateway.sign))}`)
  }
  for (const f of floors) {
    const q = quantiles(f.runs.map((r) => r.total))
    const what = f.durable ? 'floor, countersign\'s durable points (3 fsyncs in a row) and reads at signing' : 'floor, the issue\'s named guarantees (1 fsync), reads sent with the simulation'
    console.log(`  ${what}   p50 ${fmt(q.p50, 2).padStart(6)} ms  p99 ${fmt(q.p99, 2).padStart(6)} ms  = ${fmt(q.p50 / b.p50, 2)}x / ${fmt(q.p99 / b.p99, 2)}x bare   (p50/p99 ms: ${phaseSummary(f.runs).join(', ')})`)
    console.log(`    in its gateway (p50 ms): approve ${serverPhaseSummary(f.runs.map((r) => r.gateway.approve))}; send ${serverPhaseSummary(f.runs.map((r) => r.gateway.sign))}`)
  }
  console.log(`  ratio p50 ${fmt(c.p50 / b.p50, 2)}x (goal <= 1.5x)   ratio p99 ${fmt(c.p99 / b.p99, 2)}x (goal <= 3x)`)
  return { bare: b, countersign: c }
}

/** PIPELINE_GATEWAY=path/to/main.js: the concurrent part runs that gateway build instead (its CPU per transfer, against this one's). */
const gatewayOverride = () => (process.env.PIPELINE_GATEWAY ? { gatewayEntry: process.env.PIPELINE_GATEWAY } : {})

/**
 * `clients` workers, worker w on wallet w % wallets, for `ms`; completed pipelines per second.
 * @template {Run} R
 * @param {(wallet: number, n: number) => Promise<R>} run
 * @param {{ clients: number, wallets: number, ms: number }} opts
 * @returns {Promise<{ rate: number, results: R[], failures: number }>}
 */
async function concurrentRun(run, { clients, wallets, ms }) {
  /** @type {R[]} */
  const results = []
  let failures = 0
  let n = 0
  const end = Date.now() + ms
  const started = performance.now()
  await Promise.all(
    Array.from({ length: clients }, async (_, w) => {
      while (Date.now() < end) {
        try {
          results.push(await run(w % wallets, n++))
        } catch (err) {
          failures++
          if (failures <= 3) console.log(`  failure: ${(err instanceof Error ? err.message : String(err)).slice(0, 300)}`)
        }
      }
    }),
  )
  return { rate: results.length / ((performance.now() - started) / 1000), results, failures }
}

/**
 * @param {{ wallets: number, clients: number, rounds: number, ms: number, warmupMs: number, nodeArgs: NodeArgs, abRoot: string | undefined }} opts
 *   abRoot: a third arm, that built tree's services against their own anvil, in the same alternation
 */
async function concurrent({ wallets, clients, rounds, ms, warmupMs, nodeArgs, abRoot }) {
  const keys = devKeys.slice(0, wallets)
  const accounts = keys.map((k) => privateKeyToAccount(k))
  const anvilBare = await startAnvil(CHAIN_ID)
  const anvilCs = await startAnvil(CHAIN_ID)
  const bareClient = publicClient(anvilBare.rpcUrl)
  const csClient = publicClient(anvilCs.rpcUrl)
  const stack = await startStack({ keys, rpcUrl: anvilCs.rpcUrl, policy: POLICY, approver: 'auto', nodeArgs, ...gatewayOverride() })
  // With an A/B arm, the two stacks take turns going first, as often each (an even number of rounds).
  const counted = abRoot ? rounds + (rounds % 2) : rounds
  // Profiled, one arm would run slower than the other: an A/B figure would measure the profiler.
  if (abRoot && process.env.BENCH_CPU_PROF) throw new Error('PIPELINE_AB_ROOT and BENCH_CPU_PROF do not go together: only this tree is profiled')
  const anvilAb = abRoot ? await startAnvil(CHAIN_ID) : null
  const abClient = anvilAb ? publicClient(anvilAb.rpcUrl) : null
  const abStack = anvilAb ? await startStack({ keys, rpcUrl: anvilAb.rpcUrl, policy: POLICY, approver: 'auto', servicesRoot: abRoot }) : null
  /** @typedef {{ done: Run[], failures: number, seconds: number, rates: number[] }} Totals rates: transfers/s by round */
  /** @type {Totals} */
  const bare = { done: [], failures: 0, seconds: 0, rates: [] }
  /** @type {Totals} */
  const cs = { done: [], failures: 0, seconds: 0, rates: [] }
  /** @type {Totals} */
  const abTotals = { done: [], failures: 0, seconds: 0, rates: [] }
  /**
   * @param {Totals} acc
   * @param {{ rate: number, results: Run[], failures: number }} run
   */
  const add = (acc, run) => {
    acc.done.push(...run.results)
    acc.failures += run.failures
    acc.seconds += run.results.length / run.rate
    acc.rates.push(run.rate)
  }
  /** @type {string[]} */
  let nonceLines = []
  /** @type {Error | null} */
  let nonceError = null
  /** @type {import('./lib.mjs').CpuPerRequest[]} */
  const gatewayCpu = []
  /** @type {import('./lib.mjs').CpuPerRequest[]} */
  const abGatewayCpu = []
  /** @type {(w: number, n: number) => Promise<Run>} */
  const bareTransfer = (w, n) => barePipeline(bareClient, nth(accounts, w), n)
  /**
   * @param {Awaited<ReturnType<typeof startStack>>} on
   * @param {Client} client
   * @returns {(w: number, n: number) => Promise<CountersignRun>}
   */
  const countersignOn = (on, client) => (w, n) => countersignPipeline(on, client, nth(accounts, w).address, n)
  /**
   * One round of a stack's transfers, with its gateway's CPU per transfer.
   * @param {Awaited<ReturnType<typeof startStack>>} on
   * @param {Client} client
   * @param {Totals} totals
   * @param {import('./lib.mjs').CpuPerRequest[]} cpuPerTransfer
   */
  const countersignRound = async (on, client, totals, cpuPerTransfer) => {
    const before = threadCpuMs(on.gatewayPid)
    const run = await concurrentRun(countersignOn(on, client), { clients, wallets, ms })
    const cpu = cpuPerRequest(on.gatewayPid, before, threadCpuMs(on.gatewayPid), run.results.length)
    if (cpu) cpuPerTransfer.push(cpu)
    add(totals, run)
  }
  try {
    // A round of each, not counted: the services start cold here, and a fresh gateway's CPU per transfer
    // halves over its first ~20 s of load (V8 compiling its paths): counted, that measured start-up, not throughput.
    // Their transactions count in the nonce checks below.
    const warm = { ms: warmupMs, wallets, clients }
    const warmBare = await concurrentRun(bareTransfer, warm)
    const warmCs = await concurrentRun(countersignOn(stack, csClient), warm)
    const warmAb = abStack && abClient ? await concurrentRun(countersignOn(abStack, abClient), warm) : null
    bare.failures += warmBare.failures
    cs.failures += warmCs.failures
    abTotals.failures += warmAb?.failures ?? 0
    for (let r = 0; r < counted; r++) {
      add(bare, await concurrentRun(bareTransfer, { clients, wallets, ms }))
      const arms = [() => countersignRound(stack, csClient, cs, gatewayCpu)]
      if (abStack && abClient) arms.splice(r % 2, 0, () => countersignRound(abStack, abClient, abTotals, abGatewayCpu))
      for (const arm of arms) await arm()
    }
    // A failed transfer may have been sent (a lost answer), which the nonce check would report first: the
    // failures are reported below, with the figures, before any nonce error.
    try {
      await assertContiguousNonces(bareClient, [...warmBare.results, ...bare.done])
      nonceLines = await assertContiguousNonces(csClient, [...warmCs.results, ...cs.done])
      if (abClient) await assertContiguousNonces(abClient, [...(warmAb?.results ?? []), ...abTotals.done])
    } catch (err) {
      nonceError = /** @type {Error} */ (err)
    }
  } finally {
    await stack.stop()
    await abStack?.stop()
    anvilBare.stop()
    anvilCs.stop()
    anvilAb?.stop()
  }
  const bareRate = bare.done.length / bare.seconds
  const csRate = cs.done.length / cs.seconds
  const b = quantiles(bare.done.map((r) => r.total))
  const c = quantiles(cs.done.map((r) => r.total))
  console.log(`\nconcurrent pipeline, ${wallets} wallets x ${clients} clients, ${counted} interleaved rounds of ${ms / 1000} s after one of ${warmupMs / 1000} s each not counted (load avg ${load()})`)
  const byRound = (/** @type {Totals} */ t) => `by round ${t.rates.map((r) => fmt(r, 1)).join(', ')}`
  console.log(`  bare viem + local key   ${fmt(bareRate, 1).padStart(6)} transfers/s   p50 ${fmt(b.p50, 1)} ms  p99 ${fmt(b.p99, 1)} ms  (failures ${bare.failures}; ${byRound(bare)}; p50/p99 ms: ${phaseSummary(bare.done).join(', ')})`)
  console.log(`  countersign (auto)      ${fmt(csRate, 1).padStart(6)} transfers/s   p50 ${fmt(c.p50, 1)} ms  p99 ${fmt(c.p99, 1)} ms  (failures ${cs.failures}; ${byRound(cs)}; p50/p99 ms: ${phaseSummary(cs.done).join(', ')})`)
  console.log(`  ratio countersign / bare   ${fmt((csRate / bareRate) * 100, 1)} %   (goal >= 70 %; by round ${cs.rates.map((r, i) => `${fmt((r / (bare.rates[i] ?? NaN)) * 100, 1)} %`).join(', ')})`)
  /** @param {import('./lib.mjs').CpuPerRequest[]} rounds */
  const cpuText = (rounds) => rounds.map((c) => `${fmt(c.loopUs + c.othersUs)} µs (loop ${fmt(c.loopUs)})`).join(', ')
  if (gatewayCpu.length) console.log(`  gateway CPU per transfer (approve-request + sign-and-send, all threads; the event loop's part): ${cpuText(gatewayCpu)} by round`)
  if (abRoot) {
    const abRate = abTotals.done.length / abTotals.seconds
    const a = quantiles(abTotals.done.map((r) => r.total))
    console.log(`  A/B: services of ${abRoot}   ${fmt(abRate, 1).padStart(6)} transfers/s   p50 ${fmt(a.p50, 1)} ms  p99 ${fmt(a.p99, 1)} ms  (failures ${abTotals.failures}); this tree / that one ${fmt((csRate / abRate) * 100, 1)} %`)
    console.log(`    its gateway CPU per transfer: ${cpuText(abGatewayCpu)} by round`)
  }
  console.log(`  nonces per wallet (countersign): ${nonceLines.join('; ')}`)
  if (bare.failures || cs.failures || abTotals.failures) throw new Error(`pipeline benchmark saw failures${nonceError ? `, and ${nonceError.message}` : ''}`)
  if (nonceError) throw nonceError
  return { bareRate, csRate }
}

/** @param {{ rounds?: number, perRound?: number, warmup?: number }} [opts] */
export async function benchPipeline({ rounds = Number(process.env.PIPELINE_ROUNDS ?? 4), perRound = 50, warmup = Number(process.env.PIPELINE_SEQUENTIAL_WARMUP ?? 20) } = {}) {
  // BENCH_CPU_PROF=dir profiles the three services.
  const nodeArgs = (/** @type {string} */ phase) => ({ gateway: profileArgs(`gateway-${phase}`), approver: profileArgs(`approver-${phase}`), signer: profileArgs(`signer-${phase}`) })
  // PIPELINE_AB_GATEWAY=path/to/another/gateway/dist/main.js runs that build too, interleaved (what a change bought);
  // PIPELINE_AB_ROOT=path/to/another/tree runs all three services of that tree (built) instead.
  const { PIPELINE_AB_GATEWAY: abGateway, PIPELINE_AB_ROOT: abRoot } = process.env
  if (!process.env.PIPELINE_CONCURRENT_ONLY) await sequential({ rounds, perRound, warmup, nodeArgs: nodeArgs('sequential'), abGateway, abRoot })
  if (process.env.PIPELINE_SEQUENTIAL_ONLY) return
  // PIPELINE_CONCURRENT_ROUNDS=n counted rounds (3; with an A/B arm, rounded up to an even number).
  await concurrent({ wallets: 8, clients: 8, rounds: Number(process.env.PIPELINE_CONCURRENT_ROUNDS ?? 3), ms: 4000, warmupMs: Number(process.env.PIPELINE_WARMUP_MS ?? 12_000), nodeArgs: nodeArgs('concurrent'), abRoot })
}
