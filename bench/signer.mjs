// The signer over its Unix socket against the raw cost of one secp256k1
// signature on one thread (issue 17 goal 1: >= 80 % at concurrency 8), with
// the group commit it achieved: how many signatures shared each fsync. The
// two sides alternate in SIGN_SLICES slices (default 16), so that a machine
// whose speed drifts during the run moves both alike.
// BENCH_SIGNER_CPU_PROF=<dir> runs the signer under --cpu-prof (profile
// written there when it stops). SIGN_AB_ROOT=<tree> compares this signer
// with that tree's (built) in alternating rounds instead (SIGN_AB_ROUNDS,
// default 6): rate and the signer's CPU per signature, side by side.
import os from 'node:os'
import path from 'node:path'
import { buildTransaction, createRpcClient, SIGNER_SOCKET, defaultRouterTable } from '@countersign/shared'
import { privateKeyToAccount } from 'viem/accounts'
import { fmt, nth, ratio } from './lib.mjs'
import { throughput, transferIntent } from './signing.mjs'
import { devKeys, startStack } from './stack.mjs'

const CONCURRENCY = 8
const routers = defaultRouterTable()
const load = () => os.loadavg().map((l) => l.toFixed(2)).join(' ')

/** @typedef {import('../services/signer/dist/signing/signerCore.js').SignerDurability} SignerDurability what the signer's health reports of its work */

/**
 * Batch sizes from two health snapshots: size -> number of fsyncs that released that many waiters.
 * @param {Record<number, number>} [after]
 * @param {Record<number, number>} [before]
 * @returns {Record<number, number>}
 */
function histogramDelta(after = {}, before = {}) {
  /** @type {Record<number, number>} */
  const out = {}
  for (const [size, n] of Object.entries(after)) {
    const d = n - (before[Number(size)] ?? 0)
    if (d > 0) out[Number(size)] = d
  }
  return out
}

/** No approval needed and no rate limit: every call signs. */
const SIGNER_POLICY = { maxTxPerHour: 1_000_000_000, requireApprovalAbove: { valueWei: '1000000000000000000000' } }

/**
 * The signer's CPU per signature between two health snapshots (all its threads).
 * @param {SignerDurability} before
 * @param {SignerDurability} after
 */
const cpuPerSignature = (before, after) =>
  (after.cpuUs.user + after.cpuUs.system - before.cpuUs.user - before.cpuUs.system) / Math.max(after.signatures - before.signatures, 1)

/**
 * Signer RPC at concurrency 8 for `ms`, nonces from `nonceFrom`: its rate and the health snapshots either side.
 * @param {import('@countersign/shared').RpcClient} client
 * @param {import('viem').PrivateKeyAccount} account
 * @param {number} ms
 * @param {number} nonceFrom
 */
async function signerRound(client, account, ms, nonceFrom) {
  const health = async () => {
    /** @type {{ durability: SignerDurability }} */
    const answer = await client.call('health', {})
    return answer.durability
  }
  const before = await health()
  let nonce = nonceFrom
  const started = performance.now()
  const rate = await throughput(
    async () => {
      const intent = transferIntent(account.address, nonce)
      const { txRequest } = buildTransaction(intent, routers)
      await client.call('sign', { intent, txRequest, nonce: nonce++, gas: '21000', maxFeePerGas: '2000000000', maxPriorityFeePerGas: '1000000000' })
    },
    { concurrency: CONCURRENCY, ms },
  )
  const seconds = (performance.now() - started) / 1000
  return { rate, seconds, before, after: await health(), nonce }
}

/**
 * SIGN_AB_ROOT: this signer (A) and another tree's (B), alternating rounds on their own data dirs.
 * @param {string} otherRoot
 * @param {number} rounds
 * @param {number} ms
 */
async function abRounds(otherRoot, rounds, ms) {
  const account = privateKeyToAccount(devKeys[0])
  /** @type {{ name: string, stack: Awaited<ReturnType<typeof startStack>>, client: import('@countersign/shared').RpcClient, nonce: number, rates: number[], cpu: number[] }[]} */
  const arms = []
  /** @type {[string, string | undefined][]} */
  const trees = [['A', undefined], ['B', otherRoot]]
  for (const [name, servicesRoot] of trees) {
    const stack = await startStack({ keys: [devKeys[0]], policy: SIGNER_POLICY, ...(servicesRoot ? { servicesRoot } : {}) })
    arms.push({ name, stack, client: createRpcClient({ socketPath: path.join(stack.dataDir, 'run', SIGNER_SOCKET) }), nonce: 0, rates: [], cpu: [] })
  }
  console.log(`
signer A/B: this tree (A) against ${otherRoot} (B), ${rounds} alternating rounds of ${ms / 1000} s at concurrency ${CONCURRENCY}`)
  try {
    for (let i = 0; i < rounds; i++) {
      for (const arm of i % 2 === 0 ? arms : [...arms].reverse()) {
        const { rate, before, after, nonce } = await signerRound(arm.client, account, ms, arm.nonce)
        const signatures = after.signatures - before.signatures
        const cpu = cpuPerSignature(before, after)
        // A tree from before per-turn transactions reports none.
        const storeTx = after.storeTransactions && before.storeTransactions ? after.storeTransactions.transactions - before.storeTransactions.transactions : 0
        arm.nonce = nonce
        arm.rates.push(rate)
        arm.cpu.push(cpu)
        console.log(
          `  round ${i + 1} ${arm.name}  ${fmt(rate).padStart(6)} sig/s  signer CPU ${fmt(cpu)} µs per signature  ${fmt(signatures / Math.max(after.signerDb.syncs - before.signerDb.syncs, 1), 2)} per fsync${storeTx ? `, ${fmt(signatures / storeTx, 2)} per signer.db transaction (with the audited flags' turns)` : ''}  (load ${load()})`,
        )
      }
    }
    const mean = (/** @type {number[]} */ xs) => xs.reduce((a, b) => a + b, 0) / xs.length
    for (const arm of arms) console.log(`  mean ${arm.name}  ${fmt(mean(arm.rates)).padStart(6)} sig/s  ${fmt(mean(arm.cpu))} µs per signature`)
  } finally {
    for (const arm of arms) {
      arm.client.close()
      await arm.stack.stop()
    }
  }
}

/**
 * @param {{ ms?: number, slices?: number }} [opts] ms: the time each side (raw and signer) is measured in
 * all; slices: how many alternating slices it is cut into (SIGN_SLICES), so that a machine whose
 * speed drifts during the run moves both sides alike
 */
export async function benchSigner({ ms = 8000, slices = Number(process.env.SIGN_SLICES ?? 16) } = {}) {
  if (process.env.SIGN_AB_ROOT) return abRounds(process.env.SIGN_AB_ROOT, Number(process.env.SIGN_AB_ROUNDS ?? 6), 5000)
  const account = privateKeyToAccount(devKeys[0])
  /** @type {import('viem').TransactionSerializableEIP1559} */
  const tx = { type: 'eip1559', chainId: 8453, nonce: 0, to: '0x000000000000000000000000000000000000bEEF', value: 1n, gas: 21000n, maxFeePerGas: 2n * 10n ** 9n, maxPriorityFeePerGas: 10n ** 9n }
  const sliceMs = ms / slices
  // Also the CPU one raw signature costs (this process, one thread): a
  // figure the machine's load does not move as much as the rates.
  const raw = { done: 0, seconds: 0, cpuUs: 0 }
  let rawNonce = 0
  const rawSlice = async () => {
    const cpu = process.cpuUsage()
    const n0 = rawNonce
    const started = performance.now()
    await throughput(async () => account.signTransaction({ ...tx, nonce: rawNonce++ }), { concurrency: 1, ms: sliceMs })
    const used = process.cpuUsage(cpu)
    raw.seconds += (performance.now() - started) / 1000
    raw.done += rawNonce - n0
    raw.cpuUs += used.user + used.system
  }
  const loadBefore = load()

  const prof = process.env.BENCH_SIGNER_CPU_PROF
  const nodeArgs = prof ? { signer: ['--cpu-prof', `--cpu-prof-dir=${path.resolve(prof)}`] } : {}
  const stack = await startStack({ keys: [devKeys[0]], policy: SIGNER_POLICY, nodeArgs })
  const client = createRpcClient({ socketPath: path.join(stack.dataDir, 'run', SIGNER_SOCKET) })
  try {
    // Raw and signer alternate slice by slice, each side starting half the slices.
    const signed = { done: 0, seconds: 0 }
    /** @type {number[]} */
    const sliceRatios = []
    let nonce = 0
    /** @type {SignerDurability | undefined} */
    let before
    /** @type {SignerDurability | undefined} */
    let after
    // One unmeasured slice first: the signer's first calls compile its code paths.
    nonce = (await signerRound(client, account, sliceMs, nonce)).nonce
    for (let i = 0; i < slices; i++) {
      const rawDone = raw.done
      const rawSeconds = raw.seconds
      const signerSlice = async () => {
        const round = await signerRound(client, account, sliceMs, nonce)
        before ??= round.before
        after = round.after
        signed.done += round.after.signatures - round.before.signatures
        signed.seconds += round.seconds
        nonce = round.nonce
        return round.rate
      }
      let rate
      if (i % 2 === 0) {
        await rawSlice()
        rate = await signerSlice()
      } else {
        rate = await signerSlice()
        await rawSlice()
      }
      sliceRatios.push(rate / ((raw.done - rawDone) / (raw.seconds - rawSeconds)))
    }
    if (!before || !after) throw new Error('no slice was measured')
    const rpc = signed.done / signed.seconds
    const rawRate = raw.done / raw.seconds
    const batches = histogramDelta(after.signerDb.waitersPerSync, before.signerDb.waitersPerSync)
    const signerSyncs = after.signerDb.syncs - before.signerDb.syncs
    const signatures = after.signatures - before.signatures
    const { auditDb: auditAfter } = after
    const { auditDb: auditBefore } = before
    if (!auditAfter || !auditBefore) throw new Error('the signer reports no audit.db figures (its audit log is not group-committed)')
    const auditSyncs = auditAfter.syncs - auditBefore.syncs
    const auditCommits = auditAfter.commits - auditBefore.commits
    const cpuPerSig = cpuPerSignature(before, after)
    const sysPerSig = (after.cpuUs.system - before.cpuUs.system) / Math.max(signatures, 1)
    const rawCpu = raw.cpuUs / raw.done
    /**
     * Mean fdatasync of one database between two snapshots, ms.
     * @param {import('@countersign/shared').WalSyncStats} a after
     * @param {import('@countersign/shared').WalSyncStats} b before
     */
    const fsyncMs = (a, b) => (a.syncMs - b.syncMs) / Math.max(a.syncs - b.syncs, 1)
    const shown = Object.entries(batches)
      .sort((a, b) => Number(a[0]) - Number(b[0]))
      .map(([size, n]) => `${size}:${n}`)
      .join(' ')
    console.log(`\nsign over signer.sock (rebuild, policy, token, group-committed signer.db + audit with checkpoint) vs raw secp256k1 signTransaction`)
    console.log(`  load average before / after           ${loadBefore} / ${load()}`)
    const sortedRatios = [...sliceRatios].sort((a, b) => a - b)
    console.log(`  ${slices} alternating slices of ${fmt(sliceMs)} ms each side`)
    console.log(`  raw viem signTransaction, 1 thread   ${fmt(rawRate).padStart(7)} sig/s`)
    console.log(`  signer RPC, concurrency ${CONCURRENCY}            ${fmt(rpc).padStart(7)} sig/s`)
    console.log(`  ratio RPC / raw                      ${fmt(ratio(rpc, rawRate) * 100, 1)} %   (goal: >= 80 %; slice by slice ${fmt(nth(sortedRatios, 0) * 100, 1)}–${fmt(nth(sortedRatios, sortedRatios.length - 1) * 100, 1)} %, median ${fmt(nth(sortedRatios, sortedRatios.length >> 1) * 100, 1)} %)`)
    const storeTx = after.storeTransactions.transactions - before.storeTransactions.transactions
    console.log(`  group commit: ${fmt(signatures)} signatures, ${fmt(signerSyncs)} signer.db fsyncs (${fmt(signatures / Math.max(signerSyncs, 1), 2)} per fsync), ${fmt(auditCommits)} audit.db commits (each sealed by its own checkpoint) in ${fmt(auditSyncs)} fsyncs`)
    console.log(`  signer.db transactions: ${fmt(storeTx)}, one per event-loop turn that stored signatures or set audited flags (${fmt(signatures / Math.max(storeTx, 1), 2)} signatures per transaction)`)
    console.log(`  CPU per signature: raw ${fmt(rawCpu)} µs; signer ${fmt(cpuPerSig)} µs, all its threads, ${fmt(sysPerSig)} of it in the kernel (raw / signer ${fmt(ratio(rawCpu, cpuPerSig) * 100, 1)} %)`)
    console.log(`  replies released per signer.db fsync (size:fsyncs)  ${shown}`)
    console.log(`  mean fdatasync: signer.db ${fmt(fsyncMs(after.signerDb, before.signerDb), 2)} ms, audit.db ${fmt(fsyncMs(auditAfter, auditBefore), 2)} ms; mean reply latency ${fmt((CONCURRENCY * 1000) / rpc, 2)} ms`)
    return { raw: rawRate, rpc, signatures, signerSyncs, auditSyncs, batches }
  } finally {
    client.close()
    await stack.stop()
  }
}
