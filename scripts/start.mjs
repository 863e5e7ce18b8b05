#!/usr/bin/env node
// npm start: runs every process of the Procfile, in order, with prefixed
// output. With no SERVICE_RPC_URL_* configured it first brings up the
// development stack (local anvil, a throwaway dev key, Uniswap v3 for the
// demo). Ctrl-C stops everything; if any process exits, the others are
// stopped too and the launcher exits naming it — never a half-running stack.
import { spawn } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { createRpcClient, describeFailure, readDataDir, readGatewayListen, readVariable, socketConfigFromEnv, VARIABLES } from '@countersign/shared'
import { DEV_CHAIN_ID, devModeRefusal, ensureDevKey, fundOnDevChain, isDevMode, startDevChain } from './dev-stack.mjs'
import { loadEnvFile } from './env-file.mjs'
import { prefixLines } from './prefixLines.mjs'
import { readProcfile } from './procfile.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
let loaded
try {
  loaded = loadEnvFile(path.join(root, '.env'))
} catch (err) {
  process.stderr.write(`countersign: ${describeFailure(err)}\n`)
  process.exit(1)
}
const env = { ...process.env }
// Only this launcher names the signer's dev chain, and only in dev mode (below).
delete env.SERVICE_SIGNER_DEV_CHAIN_ID
const say = (/** @type {string} */ msg) => process.stdout.write(`countersign | ${msg}\n`)
// The same readers the services use: a bad value stops the launcher, naming
// the variable, before anything starts.
let dataDir, port, sockets
try {
  dataDir = path.resolve(root, readDataDir(env))
  env.SERVICE_DATA_DIR = dataDir
  port = readGatewayListen(env).port
  sockets = socketConfigFromEnv(env, dataDir)
  // Every variable's form, as the service that reads it will check it: a typo in the approver's port stops
  // this launcher now, not after the dev chain and Uniswap were deployed (found by review).
  for (const name of /** @type {(keyof typeof VARIABLES)[]} */ (Object.keys(VARIABLES))) if (!name.includes('{')) readVariable(env, name)
} catch (err) {
  process.stderr.write(`countersign: ${describeFailure(err)}\n`)
  process.exit(1)
}
// A real token key must never sign for the dev chain (Base's chain id): refused before anything starts.
const refusal = isDevMode(env) ? devModeRefusal(env) : null
if (refusal) {
  process.stderr.write(`countersign: ${refusal}\n`)
  process.exit(1)
}
if (loaded.length) say(`.env: ${loaded.join(', ')}`)

/**
 * Secrets only one process reads. The others start without them: before, every
 * process got the whole environment, so the gateway (which runs skills) held
 * the signer's passphrase and the approver's operator token, and the signer
 * the aggregator's API key.
 * @type {Record<string, readonly string[]>}
 */
const SECRETS_OF = {
  signer: ['SERVICE_DEMO_PASSPHRASE', 'SERVICE_PASSPHRASE_FILE', 'SERVICE_PKCS11_PIN_FILE'],
  approver: ['SERVICE_OPERATOR_TOKEN', 'SERVICE_WEBHOOK_SECRET', 'SERVICE_WEBHOOK_SECRET_FILE'],
  gateway: ['AGGREGATOR_API_KEY'],
}

/**
 * The environment of the Procfile's process `name`: the launcher's, less the
 * other processes' secrets, and for the signer its own dev-chain setting.
 * @param {string} name
 * @param {Record<string, string | undefined>} base
 * @param {Record<string, string>} signerOnly
 */
function processEnv(name, base, signerOnly) {
  const out = { ...base }
  for (const [owner, names] of Object.entries(SECRETS_OF)) if (owner !== name) for (const n of names) delete out[n]
  return name === 'signer' ? { ...out, ...signerOnly } : out
}

const processes = readProcfile(path.join(root, 'Procfile'))
const width = Math.max(...processes.map((p) => p.name.length), 'countersign'.length)
/** @type {Map<string, import('node:child_process').ChildProcess>} */
const running = new Map()
let stopping = false

/**
 * @param {string} name
 * @param {NodeJS.ReadableStream} stream
 * @param {NodeJS.WritableStream} out
 */
function prefix(name, stream, out) {
  prefixLines(name.padEnd(width), stream, out)
}

/**
 * Stops every process, then exits with `code`; `why`, if given, is printed first.
 * @param {number} code
 * @param {string} [why]
 */
function stopAll(code, why) {
  if (stopping) return
  stopping = true
  if (why) process.stderr.write(`\ncountersign: ${why}; stopping everything\n`)
  for (const child of running.values()) child.kill('SIGTERM')
  const force = setTimeout(() => {
    for (const child of running.values()) child.kill('SIGKILL')
  }, 5000)
  force.unref()
  const check = setInterval(() => {
    if (running.size === 0) {
      clearInterval(check)
      process.exit(code)
    }
  }, 50)
}

/**
 * @param {string} name
 * @param {import('node:child_process').ChildProcess} child
 */
function watch(name, child) {
  running.set(name, child)
  child.on('exit', (code, signal) => {
    running.delete(name)
    if (!stopping) stopAll(1, `${name} exited (${signal ?? `code ${code}`})`)
  })
}

process.on('SIGINT', () => stopAll(0, 'interrupted'))
process.on('SIGTERM', () => stopAll(0, 'terminated'))

/**
 * SERVICE_DEV_CHAIN_PORT: 1..65535, default 8545 (0 would give anvil a port nobody could name).
 * @param {string | undefined} raw
 * @returns {number}
 */
function devChainPort(raw) {
  if (raw === undefined || raw.trim() === '') return 8545
  if (!/^[0-9]{1,5}$/.test(raw.trim()) || Number(raw) < 1 || Number(raw) > 65535) {
    process.stderr.write(`countersign: SERVICE_DEV_CHAIN_PORT must be a port number from 1 to 65535; got "${raw}"\n`)
    process.exit(1)
  }
  return Number(raw)
}

/**
 * What dev-chain.json holds (npm run demo reads it).
 * @type {{ rpcUrl: string, chainId: number, wallet: string, gatewayUrl: string, contracts: import('./uniswap-fixture.mjs').UniswapFixture | null } | null}
 */
let dev = null
/**
 * Environment only the signer gets: in dev mode, the one chain its dev key may sign for.
 * @type {Record<string, string>}
 */
const signerEnv = {}
if (isDevMode(env)) {
  try {
    say('no SERVICE_RPC_URL_* configured: starting the development stack (local chain, throwaway key)')
    const chain = await startDevChain({ port: devChainPort(env.SERVICE_DEV_CHAIN_PORT), log: say })
    watch('anvil', chain.child)
    const key = await ensureDevKey({ root, dataDir, log: say })
    await fundOnDevChain(chain.rpcUrl, key.address)
    const fixture = path.join(root, 'scripts/uniswap-fixture.mjs')
    /** @type {import('./uniswap-fixture.mjs').UniswapFixture | null} */
    let contracts = null
    if (existsSync(fixture)) {
      /** @type {typeof import('./uniswap-fixture.mjs')} */
      const { deployUniswapFixture } = await import(fixture)
      // The deployer is anvil's first default account (funded on every fresh chain); it also funds the dev wallet with tokens.
      contracts = await deployUniswapFixture({
        rpcUrl: chain.rpcUrl,
        chainId: DEV_CHAIN_ID,
        deployerKey: '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80',
        fundWallets: [key.address],
      })
      say(`dev chain: Uniswap v3 deployed (SwapRouter02 ${contracts.swapRouter02}, pool TKA/TUSD ${contracts.pool})`)
    }
    // gatewayUrl: where npm run demo finds this gateway, whatever SERVICE_PORT was here.
    dev = { rpcUrl: chain.rpcUrl, chainId: DEV_CHAIN_ID, wallet: key.address, gatewayUrl: `http://127.0.0.1:${port}`, contracts }
    writeFileSync(path.join(dataDir, 'dev-chain.json'), JSON.stringify(dev, null, 2) + '\n', { mode: 0o600 })
    env[`SERVICE_RPC_URL_${DEV_CHAIN_ID}`] = chain.rpcUrl
    env.SERVICE_KEYSTORE_DIR = key.keystoreDir
    env.SERVICE_PASSPHRASE_FILE = key.passFile
    delete env.SERVICE_DEMO_PASSPHRASE
    if (contracts) env[`SERVICE_V3_ROUTER_${DEV_CHAIN_ID}`] = contracts.swapRouter02
    // The signer decides dev-key use from its own configuration, never from a gateway's word.
    signerEnv.SERVICE_SIGNER_DEV_CHAIN_ID = String(DEV_CHAIN_ID)
  } catch (err) {
    process.stderr.write(`countersign: the development stack did not start: ${err instanceof Error ? err.message : String(err)}\n`)
    stopAll(1)
    await new Promise(() => {})
  }
}

for (const { name, command } of processes) {
  if (stopping) break
  const child = spawn('/bin/sh', ['-c', `exec ${command}`], { cwd: root, env: processEnv(name, env, signerEnv), stdio: ['inherit', 'pipe', 'pipe'] })
  watch(name, child)
  prefix(name, child.stdout, process.stdout)
  prefix(name, child.stderr, process.stderr)
  // Each process creates its socket before the next one needs it.
  if (name !== processes.at(-1)?.name) await new Promise((r) => setTimeout(r, 400))
}

/**
 * Retries `probe` every 200 ms for up to `ms`; true once it resolves truthy.
 * @param {() => Promise<boolean>} probe
 * @param {number} ms
 * @returns {Promise<boolean>}
 */
async function ready(probe, ms) {
  for (const end = Date.now() + ms; Date.now() < end && !stopping; ) {
    try {
      if (await probe()) return true
    } catch {}
    await new Promise((r) => setTimeout(r, 200))
  }
  return false
}

// Tell a newcomer what to do next, once the gateway answers and the signer
// has unlocked its keys (seconds on a loaded machine): saying "running"
// before that would send the first request into a 503.
const gatewayUp = await ready(async () => (await fetch(`http://127.0.0.1:${port}/v1/health`)).ok, 120_000)
const signerUp = await ready(async () => {
  const signer = createRpcClient({ socketPath: sockets.signer, timeoutMs: 3000 })
  try {
    /** @type {{ status: string }} */
    const health = await signer.call('health', {})
    return health.status === 'ok'
  } finally {
    signer.close()
  }
}, 120_000)
if (!stopping && !(gatewayUp && signerUp)) {
  say(`still starting after two minutes: ${gatewayUp ? '' : `the gateway does not answer on port ${port}; `}${signerUp ? '' : `the signer does not answer on ${sockets.signer}; `}see its output above`)
} else if (!stopping) {
  const tokenFile = path.join(dataDir, 'operator-token')
  const token = existsSync(tokenFile) ? readFileSync(tokenFile, 'utf8').trim() : '(see SERVICE_OPERATOR_TOKEN)'
  const lines = [
    '',
    `countersign is running on http://127.0.0.1:${port}`,
    `  dashboard:      http://127.0.0.1:${port}/approval-ui   (operator token: ${token})`,
    `  data:           ${dataDir}  (audit.db, keystore, operator-token)`,
  ]
  if (dev) {
    const now = Math.floor(Date.now() / 1000)
    const intent = {
      version: '1',
      id: '<uuid>',
      timestamp: now,
      chain: { type: 'evm', chainId: dev.chainId },
      wallet: { address: dev.wallet },
      action: { type: 'transfer_native', to: '0x000000000000000000000000000000000000bEEF', amount: '10000000000000000' },
      constraints: { maxGasWei: '1000000000000000', deadline: now + 3600, maxSlippageBps: 0 },
    }
    lines.push(
      `  dev wallet:     ${dev.wallet} (throwaway key, local chain ${dev.rpcUrl} only; its transactions carry Base's chain id 8453: never fund this address on Base)`,
      ...(dev.contracts ? [`  dev tokens:     TKA ${dev.contracts.tokenA} (18 decimals), TUSD ${dev.contracts.tokenB} (6 decimals); all in ${path.join(dataDir, 'dev-chain.json')}`] : []),
      '  try it:         npm run demo        (in another terminal: a guided tour of the API)',
      '  or submit a transfer yourself and approve it on the dashboard:',
      `    curl -s -X POST http://127.0.0.1:${port}/v1/tx/approve-request -H 'content-type: application/json' \\`,
      `      -d '${JSON.stringify(intent).replace('<uuid>', "'\"$(cat /proc/sys/kernel/random/uuid)\"'")}'`,
      '    then send it: POST /v1/tx/sign-and-send with {"intent": <the same intent>, "approvalTokenId": <from the answer>}',
    )
  }
  lines.push('  Ctrl-C stops everything.', '')
  process.stdout.write(lines.join('\n') + '\n')
}
