import path from 'node:path'
import { listenHttp } from '@countersign/shared/http/activatedSocket'
import { DEFAULT_CONNECTION_LIMITS } from '@countersign/shared/http/connectionLimits'
import {
  createRpcClient,
  describeFailure,
  defaultPolicyConfig,
  loadPolicyFile,
  unlimitedTokensWarning,
  holdInstanceLock,
  makePrivateDir,
  openAuditLog,
  routerTableFromEnv,
  startWalCheckpoints,
  WAL_CHECKPOINT_FAILED_MESSAGE,
  socketConfigFromEnv,
  warnUnknownVariables,
} from '@countersign/shared'
import { buildGatewayApp } from './app.js'
import { createChainClients, verifyChainIds, watchChainIds } from './chain/chainClients.js'
import type { SlowRpcCall } from './chain/keepAliveFetch.js'
import { loadGatewayConfig } from './config.js'
import { openGatewayDb } from './store/gatewayDb.js'
import { openRateLimitStore } from './store/rateLimits.js'
import { createKnownRecipients } from './store/knownRecipients.js'
import { createSentTxs } from './store/sentTxs.js'
import { createSwapRoutes } from './store/swapRoutes.js'
import { createIntentReservations } from './store/intentReservations.js'
import { createScanPool } from './skills/scan/pool.js'
import { createSkillRegistry } from './skills/registry.js'
import { probeSandbox } from './skills/sandbox/probe.js'
import { removeStaleRunRoots } from './skills/sandbox/runRoot.js'

const SLOW_CALL_MESSAGE = 'a request to the chain node was slow or got no answer (viem retries a call once; the client waits for it)'

async function main(): Promise<void> {
  // First: a misspelt name may be why the configuration below is refused.
  warnUnknownVariables(process.env, 'gateway')
  const config = loadGatewayConfig(process.env)
  const routers = routerTableFromEnv(process.env)
  const policy = config.policyFile ? loadPolicyFile(config.policyFile) : defaultPolicyConfig()
  // The app's logger exists only once the app does; a slow node call before that (the chain id check) goes to stderr.
  let warnSlowCall = (report: SlowRpcCall): void => {
    process.stderr.write(`${JSON.stringify({ level: 40, time: Date.now(), rpc: report, msg: SLOW_CALL_MESSAGE })}\n`)
  }
  const chains = createChainClients(config.rpcUrls, { onSlowCall: (report) => warnSlowCall(report) })
  await verifyChainIds(chains, config.rpcUrlSources)

  makePrivateDir(config.dataDir)
  // Before anything is read or bound: a second gateway on this data directory stops here, in one sentence.
  // Held for the process's life (the exit listener also keeps it from being collected, which would drop it).
  const instanceLock = holdInstanceLock(config.dataDir, 'gateway')
  process.once('exit', () => instanceLock.release())
  // On stderr until the app's logger exists.
  let walCheckpointFailed = (err: Error): void => void process.stderr.write(`countersign gateway: ${WAL_CHECKPOINT_FAILED_MESSAGE}: ${err.message}\n`)
  const audit = openAuditLog(path.join(config.dataDir, 'audit.db'), { writer: 'worker', onWalCheckpointError: (err) => walCheckpointFailed(err) })
  const gatewayDbFile = path.join(config.dataDir, 'gateway.db')
  const db = openGatewayDb(gatewayDbFile)
  // SQLite's checkpoints of gateway.db off the event loop, which commits its rows (files/walCheckpoints.ts).
  const gatewayDbCheckpoints = startWalCheckpoints(db, gatewayDbFile, { onError: (err) => walCheckpointFailed(err) })
  const sockets = socketConfigFromEnv(process.env, config.dataDir)
  const signer = createRpcClient({ socketPath: sockets.signer, timeoutMs: 15_000 })
  const approver = createRpcClient({ socketPath: sockets.approver, timeoutMs: 15_000 })
  const rateLimits = openRateLimitStore(audit, db, Date.now())
  const scanPool = createScanPool({})
  // A real sandbox made once at start: skills are off, with one clear warning, when it cannot be.
  const sandbox = await probeSandbox()
  removeStaleRunRoots(path.join(config.dataDir, 'run'))
  const app = await buildGatewayApp({
    host: config.host,
    bodyLimitBytes: config.bodyLimitBytes,
    audit,
    rateLimits,
    sentTxs: createSentTxs(db),
    knownRecipients: createKnownRecipients(db),
    swapRoutes: createSwapRoutes(db),
    intentReservations: createIntentReservations(db),
    policy,
    routers,
    chains,
    signer,
    approver,
    approverHttpSocket: sockets.approverHttp,
    aggregator: config.aggregator,
    skills: {
      registry: createSkillRegistry(db),
      dir: config.skillsDir,
      analyse: (files) => scanPool.analyse(files),
      concurrency: config.skillConcurrency,
      sandbox,
      runDir: path.join(config.dataDir, 'run'),
      publishers: config.skillPublishers,
    },
    logger: { level: config.logLevel },
    serverTiming: config.serverTiming,
    connectionLimits: { ...DEFAULT_CONNECTION_LIMITS, maxConnections: config.maxConnections },
  })
  warnSlowCall = (report) => app.log.warn({ rpc: report }, SLOW_CALL_MESSAGE)
  walCheckpointFailed = (err) => app.log.warn({ err: err.message }, WAL_CHECKPOINT_FAILED_MESSAGE)
  watchChainIds(chains, {
    intervalMs: config.chainCheckMs,
    onChange: (chainId, answering) =>
      answering === null
        ? app.log.warn({ chainId }, `the RPC endpoint of chain ${chainId} answers for chain ${chainId} again; requests for it are served again`)
        : app.log.error({ chainId, answering }, `the RPC endpoint of chain ${chainId} now answers for chain ${answering}: requests for chain ${chainId} are refused (502) and its cached token facts dropped until it answers for ${chainId} again`),
  })
  let closing = false
  const shutdown = async (signal: string) => {
    if (closing) return
    closing = true
    app.log.info({ signal }, 'shutting down')
    await app.close()
    signer.close()
    approver.close()
    await scanPool.close()
    await audit.close()
    await gatewayDbCheckpoints.close()
    db.close()
    process.exit(0)
  }
  process.once('SIGINT', () => void shutdown('SIGINT'))
  process.once('SIGTERM', () => void shutdown('SIGTERM'))
  // On the socket systemd holds for it when started by its .socket unit (deploy/systemd).
  await listenHttp(app, { host: config.host, port: config.port, portVariable: 'SERVICE_PORT' })
  // Printed whatever the log level, once: the operator must see why skills do not run.
  if (!sandbox.available) process.stderr.write(`countersign gateway: WARNING: ${sandbox.message}\n`)
  // Likewise a policy that lets tokens through in any amount with no operator asked (the defaults do).
  const tokensOpen = unlimitedTokensWarning(policy)
  if (tokensOpen) process.stderr.write(`countersign gateway: WARNING: ${tokensOpen}\n`)
  app.log.info(
    { dataDir: config.dataDir, policyFile: config.policyFile ?? '(defaults)', chains: chains.configured() },
    'countersign gateway ready',
  )
  // What the signer holds, in the start-up log; development keys stand out.
  // The signer may still be unlocking keys (seconds on a loaded machine), so
  // the gateway asks again every second for two minutes before giving up.
  const askSigner = async (attempt: number): Promise<void> => {
    try {
      await signer.call<{ status: string; accounts: number }>('health', {}, { timeoutMs: 3000 })
      const accounts = await signer.call<Array<{ address: string; label: string | null; dev: boolean }>>('accounts', {}, { timeoutMs: 3000 })
      const dev = accounts.filter((a) => a.dev)
      app.log.info({ health: { status: 'ok', version: '0.1.0' }, signerAccounts: accounts }, 'signer health')
      if (dev.length > 0) {
        app.log.warn({ devKeys: dev.map((a) => a.address) }, 'DEV KEY in use: throwaway development key(s); they sign for the local development chain only')
      }
    } catch (err) {
      if (attempt === 0) app.log.warn({ err: (err as Error).message }, 'signer not reachable yet; sign-and-send answers 503 until it is')
      if (attempt < 120) setTimeout(() => void askSigner(attempt + 1), 1000).unref()
    }
  }
  void askSigner(0)
}

main().catch((err: unknown) => {
  process.stderr.write(`countersign gateway: failed to start: ${describeFailure(err)}\n`)
  process.exit(1)
})
