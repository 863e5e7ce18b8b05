import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import {
  createAjv,
  noPreflight,
  systemClock,
  type AuditLog,
  type Clock,
  type PolicyConfig,
  type RouterTable,
} from '@countersign/shared'
import { createChainClients, type ChainClients } from './chain/chainClients.js'
import { createWalletQueue } from './chain/walletQueue.js'
import { installErrorHandling } from '@countersign/shared/http/errors'
import { installHostGuard } from '@countersign/shared/http/hostGuard'
import { createPolicyGate } from './pipeline/policyGate.js'
import { approveRequestRoutes, type ApproverCaller, type RunPreflight } from './routes/approveRequest.js'
import { approverProxyRoutes, forwardApproverWebSocket } from './routes/approverProxy.js'
import { buildRoutes } from './routes/build.js'
import { chainReadRoutes } from './routes/chainReads.js'
import { healthRoutes } from './routes/health.js'
import { historyRoutes } from './routes/history.js'
import { signAndSendRoutes, type SignerCaller } from './routes/signAndSend.js'
import type { RateLimitStore } from './store/rateLimits.js'
import type { SentTxs } from './store/sentTxs.js'

export interface GatewayDeps {
  host: string
  bodyLimitBytes: number
  audit: AuditLog
  rateLimits: RateLimitStore
  sentTxs: SentTxs
  policy: PolicyConfig
  routers: RouterTable
  /** Chain RPC clients; none configured means chain operations answer 502 no_rpc_client. */
  chains?: ChainClients
  /** Client of signer.sock. */
  signer: SignerCaller
  /** Client of approver.sock. */
  approver: ApproverCaller
  /** The approver's HTTP address, for the dashboard, pending, decide and the WebSocket. */
  approverUrl: string
  /** Simulation and risk; defaults to none (the preflight seam). */
  preflight?: RunPreflight
  clock?: Clock
  logger?: FastifyServerOptions['logger']
}

/** The gateway's HTTP app, with every dependency passed in (no globals), so tests inject their own. */
export async function buildGatewayApp(deps: GatewayDeps): Promise<FastifyInstance> {
  const clock = deps.clock ?? systemClock
  const chains = deps.chains ?? createChainClients({})
  const app = Fastify({
    logger: deps.logger ?? false,
    bodyLimit: deps.bodyLimitBytes,
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    return503OnClosing: true,
    // Request ids in logs without trusting a client-supplied header.
    requestIdHeader: false,
  })
  const ajv = createAjv()
  app.setValidatorCompiler(({ schema }) => ajv.compile(schema))

  installErrorHandling(app)
  installHostGuard(app, deps.host)

  const policyGate = createPolicyGate({ policy: deps.policy, routers: deps.routers, rateLimits: deps.rateLimits, audit: deps.audit, clock })
  await app.register(healthRoutes, { clock, startedAtMs: clock() })
  await app.register(buildRoutes, { audit: deps.audit, policyGate, routers: deps.routers })
  await app.register(signAndSendRoutes, {
    audit: deps.audit,
    policyGate,
    routers: deps.routers,
    chains,
    queue: createWalletQueue(),
    sentTxs: deps.sentTxs,
    signer: deps.signer,
    clock,
  })
  await app.register(approveRequestRoutes, {
    audit: deps.audit,
    policyGate,
    routers: deps.routers,
    approver: deps.approver,
    preflight: deps.preflight ?? (async () => noPreflight()),
  })
  await app.register(approverProxyRoutes, { approverUrl: deps.approverUrl })
  forwardApproverWebSocket(app, deps.approverUrl, deps.host)
  await app.register(chainReadRoutes, { chains })
  await app.register(historyRoutes, { audit: deps.audit })
  return app
}
