// Real processes for the benchmarks: anvil, the signer, the gateway.
import { execFile, spawn } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { freePort, root, spawnReady, startNode, tempDir } from './lib.mjs'

const require = createRequire(import.meta.url)
export const PASSPHRASE = 'bench passphrase'

/** anvil's default dev keys (mnemonic "test test … junk"), funded on every fresh chain. */
export const devKeys = /** @type {const} */ ([
  '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80',
  '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d',
  '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a',
  '0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6',
  '0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a',
  '0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba',
  '0x92db14e403b83dfe3df233f83dfa3a0d7096f21ca9b0d6d6b8d88b2b4ec1564e',
  '0x4bbbf85ce3377467afe5d46f804f221813b2bb87f24d81f60f1fcdbf7cbf4356',
])

/**
 * A fresh anvil on a free port, killed when the benchmark exits.
 *
 * With --prune-history 256 (states of the last 256 blocks in memory, none on
 * disk; without a number, calls on "latest" raced its pruning under load and
 * eth_simulateV1 failed as "invalid parameters"): anvil otherwise writes the state of older blocks to
 * disk once it holds a few thousand, and from then on every call against the
 * latest state slowed (an ad hoc script: eth_estimateGas 0.7 ms at 3,000
 * blocks, 4.9 ms at 4,000; eth_simulateV1 0.9 and 3.7 ms; pruned, 0.9 ms and
 * 0.9 ms at 6,000). The concurrent pipeline makes that many blocks, and the
 * bare pipeline, one call after another, slowed by half over its rounds while
 * countersign (fewer round trips) did not: the ratio followed the chain's
 * length. The benchmarks only read the latest state; receipts are kept.
 * @param {number} [chainId]
 * @returns {Promise<{ rpcUrl: string, chainId: number, stop: () => void }>}
 */
export async function startAnvil(chainId = 8453) {
  const port = await freePort()
  const bin = path.join(path.dirname(require.resolve('@foundry-rs/anvil-linux-amd64/package.json')), 'bin', 'anvil')
  const child = spawn(bin, ['--host', '127.0.0.1', '--port', String(port), '--chain-id', String(chainId), '--silent', '--prune-history', '256'], { stdio: 'ignore' })
  process.once('exit', () => child.kill('SIGKILL'))
  const rpcUrl = `http://127.0.0.1:${port}`
  for (let i = 0; ; i++) {
    try {
      const r = await fetch(rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}' })
      if (r.ok) break
    } catch {}
    if (i > 200) throw new Error('anvil did not start')
    await new Promise((r) => setTimeout(r, 25))
  }
  return { rpcUrl, chainId, stop: () => void child.kill('SIGTERM') }
}

/**
 * countersign-keys import of each key into dataDir's keystore, under PASSPHRASE.
 * @param {string} dataDir
 * @param {readonly string[]} keys
 */
export async function importKeys(dataDir, keys) {
  for (const key of keys) {
    /** @type {Promise<void>} */
    const imported = new Promise((resolve, reject) => {
      const c = execFile(process.execPath, [path.join(root, 'services/signer/dist/cli/keys.js'), 'import', '--data-dir', dataDir], { env: { ...process.env, SERVICE_DEMO_PASSPHRASE: PASSPHRASE } }, (err) => (err ? reject(err) : resolve()))
      // execFile always pipes stdin.
      c.stdin?.end(key)
    })
    await imported
  }
}

/**
 * Signer (and, with rpcUrl, the gateway) on a fresh data dir holding `keys`;
 * with `approver` (its SERVICE_APPROVAL_MODE, e.g. 'auto') the approver too.
 * `nodeArgs` per service (e.g. { gateway: ['--cpu-prof', ...] }) for profiling;
 * `gatewayEntry` another build of the gateway, `servicesRoot` another tree
 * whose three services all run (A/B comparisons).
 * @param {object} opts
 * @param {readonly string[]} opts.keys
 * @param {string} [opts.rpcUrl]
 * @param {number} [opts.chainId]
 * @param {object} [opts.policy] written to the policy file as JSON
 * @param {Record<string, string>} [opts.env]
 * @param {string | null} [opts.approver]
 * @param {{ gateway?: string[], approver?: string[], signer?: string[] }} [opts.nodeArgs]
 * @param {string} [opts.servicesRoot]
 * @param {string} [opts.gatewayEntry]
 * @returns {Promise<{ dataDir: string, url: string | null, gatewayPid: number | null, stop: () => Promise<void> }>}
 */
export async function startStack({ keys, rpcUrl, chainId = 8453, policy = {}, env: extraEnv = {}, approver: approvalMode = null, nodeArgs = {}, servicesRoot = root, gatewayEntry = path.join(servicesRoot, 'services/gateway/dist/main.js') }) {
  const dataDir = tempDir('cs-b-')
  const policyFile = path.join(dataDir, 'policy.json')
  writeFileSync(policyFile, JSON.stringify(policy))
  await importKeys(dataDir, keys)
  /** @type {Record<string, string>} */
  const env = { SERVICE_DATA_DIR: dataDir, SERVICE_POLICY_FILE: policyFile, SERVICE_DEMO_PASSPHRASE: PASSPHRASE, SERVICE_LOG_LEVEL: 'warn', ...extraEnv }
  const signer = await spawnReady(path.join(servicesRoot, 'services/signer/dist/main.js'), env, /signer ready/, nodeArgs.signer)
  let approver = null
  if (approvalMode) {
    env.SERVICE_APPROVER_PORT = String(await freePort())
    approver = await spawnReady(path.join(servicesRoot, 'services/approver/dist/main.js'), { ...env, SERVICE_APPROVAL_MODE: approvalMode, ...(rpcUrl ? { [`SERVICE_RPC_URL_${chainId}`]: rpcUrl } : {}) }, /approver ready/, nodeArgs.approver)
  }
  let gateway = null
  let url = null
  if (rpcUrl) {
    const port = await freePort()
    url = `http://127.0.0.1:${port}`
    gateway = await startNode(gatewayEntry, {
      env: { ...env, SERVICE_PORT: String(port), [`SERVICE_RPC_URL_${chainId}`]: rpcUrl },
      url: `${url}/v1/health`,
      nodeArgs: nodeArgs.gateway,
    })
  }
  return {
    dataDir,
    url,
    gatewayPid: gateway?.pid ?? null,
    stop: async () => {
      await gateway?.stop()
      await Promise.all([approver?.stop(), signer.stop()])
    },
  }
}

/**
 * The guarantees-only floor (bench/floor-gateway.mjs and bench/floor-signer.mjs)
 * for one key against rpcUrl. `durable`: the token mint and the broadcast's
 * audit row durable before their replies too, as countersign keeps them;
 * otherwise only the token consumption and signature record (with its audit
 * row) are, which is what issue 17 names. `prefetch`: the reads signing needs
 * are sent with the simulation and reused, instead of read again at signing.
 * @param {{ key: string, rpcUrl: string, chainId?: number, durable: boolean, prefetch: boolean }} opts
 * @returns {Promise<{ url: string, stop: () => Promise<void> }>}
 */
export async function startFloor({ key, rpcUrl, chainId = 8453, durable, prefetch }) {
  const dir = tempDir('cs-floor-')
  const socket = path.join(dir, 'signer.sock')
  const flag = durable ? '1' : '0'
  const signer = await spawnReady(path.join(root, 'bench/floor-signer.mjs'), { FLOOR_SOCKET: socket, FLOOR_DB: path.join(dir, 'signer.db'), FLOOR_KEY: key, FLOOR_DURABLE_MINT: flag }, /floor signer ready/)
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const gateway = await startNode(path.join(root, 'bench/floor-gateway.mjs'), {
    env: { PORT: String(port), FLOOR_SOCKET: socket, FLOOR_RPC: rpcUrl, FLOOR_CHAIN_ID: String(chainId), FLOOR_AUDIT_DB: path.join(dir, 'audit.db'), FLOOR_DURABLE_BROADCAST_AUDIT: flag, FLOOR_PREFETCH: prefetch ? '1' : '0' },
    url: `${url}/ready`,
  })
  return {
    url,
    stop: async () => {
      await gateway.stop()
      await signer.stop()
    },
  }
}
