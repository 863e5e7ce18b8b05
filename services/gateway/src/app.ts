import Fastify, { type FastifyInstance, type FastifyServerOptions, type RouteOptions } from 'fastify'
import {
  createAjv,
  gasCostPolicyProblem,
  noPreflight,
  systemClock,
  type AuditLog,
  type BuiltTx,
  type TxIntent,
  type Clock,
  type PolicyConfig,
  type RouterTable,
} from '@countersign/shared'
import { createChainClients, type ChainClients } from './chain/chainClients.js'
import { createWalletQueue } from './chain/walletQueue.js'
import { policyDeniedBody } from '@countersign/shared/http/errorBodies'
import { HttpError, installErrorHandling } from '@countersign/shared/http/errors'
import { installStrictJson } from '@countersign/shared/http/strictJson'
import { installHostGuard } from '@countersign/shared/http/hostGuard'
import { answerExpectation, lowLevelErrorOptions } from '@countersign/shared/http/lowLevelErrors'
import { applyConnectionLimits, DEFAULT_CONNECTION_LIMITS, type ConnectionLimits } from '@countersign/shared/http/connectionLimits'
import { answerConnect } from '@countersign/shared/http/upgradeOffers'
import { createPolicyGate } from './pipeline/policyGate.js'
import { approveRequestRoutes, type ApproverCaller, type RunPreflight } from './routes/approveRequest.js'
import { approverProxyRoutes, forwardApproverWebSocket } from './routes/approverProxy.js'
import { createApprovalWaiters } from './approvals/approvalWaiters.js'
import { checkedApprover } from './approvals/checkedApprover.js'
import { buildOpenApiDocument, openApiRouteSchema } from './openapi.js'
import { buildRoutes } from './routes/build.js'
import { chainReadRoutes } from './routes/chainReads.js'
import { healthRoutes } from './routes/health.js'
import { historyRoutes } from './routes/history.js'
import { intentTxRoutes } from './routes/intentTx.js'
import { signAndSendRoutes, type SignerCaller } from './routes/signAndSend.js'
import { skillRoutes } from './routes/skills.js'
import type { SkillRegistry } from './skills/registry.js'
import { createSkillCalls } from './skills/skillCalls.js'
import { approverOperatorAuthority, type OperatorAuthority } from './operatorAuthority.js'
import type { FileReport, ScanFile } from './skills/scan/pool.js'
import type { SandboxStatus } from './skills/sandbox/probe.js'
import { ChainFacts } from './preflight/chainFacts.js'
import { createL1FeeReader } from './chain/l1Fee.js'
import { createTokenFactsReader } from './chain/tokenFacts.js'
import { createRecentPreflights } from './preflight/recentPreflights.js'
import { findingsOf, gasCostExceededText, preflightAuditData, runPreflight, simulationFactsOf, type PreflightReport } from './preflight/runPreflight.js'
import { createSignTimeRisk } from './preflight/signTimeRisk.js'
import { preflightRoutes } from './routes/preflight.js'
import { installServerTiming } from './serverTiming.js'
import type { AggregatorConfig } from './aggregator/client.js'
import { createIntentBuilder } from './pipeline/intentBuilder.js'
import { createV3Reference } from './aggregator/priceGuard.js'
import { createSignerWallets } from './pipeline/signerWallets.js'
import { createReservedIntents } from './pipeline/reservedIntents.js'
import { createSentTxFates } from './chain/sentTxFates.js'
import { settleAll } from './pipeline/settleAll.js'
import type { KnownRecipients } from './store/knownRecipients.js'
import type { SwapRoutes } from './store/swapRoutes.js'
import type { RateLimitStore } from './store/rateLimits.js'
import type { SentTxs } from './store/sentTxs.js'
import type { IntentReservations } from './store/intentReservations.js'

export interface GatewayDeps {
  host: string
  bodyLimitBytes: number
  audit: AuditLog
  rateLimits: RateLimitStore
  sentTxs: SentTxs
  knownRecipients: KnownRecipients
  swapRoutes: SwapRoutes
  /** Intent ids held by approval requests (gateway.db). */
  intentReservations: IntentReservations
  /** The aggregator swap API; no key means every aggregator swap uses the v3 router. */
  aggregator?: AggregatorConfig
  policy: PolicyConfig
  routers: RouterTable
  /** Chain RPC clients; none configured means chain operations answer 502 no_rpc_client. */
  chains?: ChainClients
  /** Client of signer.sock. */
  signer: SignerCaller
  /** Client of approver.sock. */
  approver: ApproverCaller
  /** The approver's HTTP socket (APPROVER_HTTP_SOCKET), for the dashboard, pending, decide and the WebSocket. */
  approverHttpSocket: string
  skills: {
    registry: SkillRegistry
    /** SERVICE_SKILLS_DIR: a skill's files are read from <dir>/<name>/<path>. */
    dir: string
    /** The scan pool's analyse: findings and module requests per file. */
    analyse: (files: ScanFile[]) => Promise<FileReport[]>
    /** SERVICE_SKILL_CONCURRENCY */
    concurrency: number
    /** The start-up sandbox probe's answer. */
    sandbox: SandboxStatus
    /** DATA_DIR/run, for the per-run API sockets of the sandbox. */
    runDir: string
    /** SERVICE_SKILL_PUBLISHERS, lower-cased. */
    publishers: ReadonlySet<string>
  }
  /** Who vouches for the operator token; default: the approver, asked over approver.sock. */
  operator?: OperatorAuthority
  /** Replaces the chain preflight that approve-request runs (tests). */
  preflight?: RunPreflight
  clock?: Clock
  logger?: FastifyServerOptions['logger']
  /** SERVICE_SERVER_TIMING=on: each response says where its time went (Server-Timing header). */
  serverTiming?: boolean
  /** Time to send a request, connections at once (default DEFAULT_CONNECTION_LIMITS; SERVICE_MAX_CONNECTIONS sets the count). */
  connectionLimits?: ConnectionLimits
  /** Sees every route as it is registered (tests: the OpenAPI document must be made of the routes' own schemas). */
  onRoute?: (route: RouteOptions) => void
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
    // Parser-level and router-level errors in the spec's shapes, with X-Service-Version.
    ...lowLevelErrorOptions,
  })
  applyConnectionLimits(app.server, deps.connectionLimits ?? DEFAULT_CONNECTION_LIMITS, (message) => app.log.warn(message))
  app.server.on('connect', answerConnect('GET, HEAD, POST, DELETE'))
  app.server.on('checkExpectation', answerExpectation)
  if (deps.onRoute) app.addHook('onRoute', deps.onRoute)
  const ajv = createAjv()
  app.setValidatorCompiler(({ schema }) => ajv.compile(schema))

  installErrorHandling(app)
  installStrictJson(app)
  installHostGuard(app, deps.host)
  installServerTiming(app, deps.serverTiming === true)

  const policyGate = createPolicyGate({ policy: deps.policy, routers: deps.routers, rateLimits: deps.rateLimits, audit: deps.audit, clock })
  // Token symbol() and decimals(), cached: descriptions, the approval card and the preflight all use the chain's, not the client's.
  const chainFacts = new ChainFacts()
  chains.onWrongChain((chainId) => chainFacts.forget(chainId))
  const tokenFacts = createTokenFactsReader(chains, chainFacts)
  const buildIntent = createIntentBuilder({
    routers: deps.routers,
    aggregator: deps.aggregator ?? { apiKey: null, baseUrl: '', timeoutMs: 10_000 },
    v3Reference: createV3Reference(chains, deps.routers),
    maxSwapSlippageBps: deps.policy.maxSwapSlippageBps,
    routes: deps.swapRoutes,
    clock,
    log: (msg, err) => app.log.warn({ err }, msg),
    shown: (intent) => tokenFacts.shown(intent),
  })
  // OP-stack chains' L1 data fee, counted against constraints.maxGasWei and policy maxGasCostWei.
  const l1Fee = createL1FeeReader({ noOracle: (chainId) => app.log.info({ chainId }, `chain ${chainId}: no GasPriceOracle predeploy on this node (a local chain?): no L1 data fee is counted`) })
  chains.onWrongChain((chainId) => l1Fee.forget(chainId))
  const preflightDeps = {
    policy: deps.policy,
    routers: deps.routers,
    facts: chainFacts,
    l1Fee,
    knownRecipients: (chainId: number, wallet: string) => deps.knownRecipients.list(chainId, wallet),
  }
  // Every simulation is audited and remembered for 120 s, so that
  // sign-and-send scores the same transaction without simulating it again.
  const recentPreflights = createRecentPreflights(clock)
  const simulate = async (intent: TxIntent, built: BuiltTx): Promise<PreflightReport> => {
    const report = await runPreflight(intent, built, chains.get(intent.chain.chainId), preflightDeps)
    recentPreflights.remember(built.txRequestHash, simulationFactsOf(report))
    return report
  }
  const recordPreflight = (intent: TxIntent, report: PreflightReport) =>
    deps.audit.append({ intentId: intent.id, event: 'preflight_completed', data: preflightAuditData(report) })
  // approve-request refuses, before any operator is asked, what cannot go
  // through: a chain without RPC (502 no_rpc_client) and a gas cost already
  // above constraints.maxGasWei at today's fees (403). When the node fails
  // there are no findings and policy may not silently allow.
  const approvalPreflight: RunPreflight = async (intent, built) => {
    chains.get(intent.chain.chainId)
    let report: PreflightReport
    try {
      report = await simulate(intent, built)
    } catch (err) {
      return { findings: { ...noPreflight(), warnings: [`simulation could not run: ${(err as Error).message.split('\n')[0]}`] }, recorded: Promise.resolve() }
    }
    // Not awaited here: the route commits it together with its own events.
    const recorded = recordPreflight(intent, report)
    recorded.catch(() => undefined) // the caller awaits it; this keeps a failure before then from counting as unhandled
    // The intent's ceiling on fees, then the operator's (policy maxGasCostWei): no operator is asked about either.
    const overPolicy = report.gasCost ? gasCostPolicyProblem(deps.policy, BigInt(report.gasCost.costWei)) : null
    if (report.gasCost && (!report.gasCost.withinLimit || overPolicy)) {
      const reason = !report.gasCost.withinLimit ? gasCostExceededText(report.gasCost) : `estimated ${overPolicy!}`
      const denied = deps.audit.append({
        intentId: intent.id,
        event: 'approve_request_created',
        // The preflight that found the cost scored the risk too: riskScore is one of this event's fields (SPEC Events; found by review).
        data: { decision: 'deny', riskScore: report.riskScore, reasons: [reason], reasonCodes: [overPolicy && report.gasCost.withinLimit ? 'gas_cost_exceeds_policy' : 'gas_cost_exceeds_max'], gasCostWei: report.gasCost.costWei, maxGasWei: report.gasCost.maxGasWei, txRequestHash: built.txRequestHash },
      })
      await settleAll([recorded, denied])
      throw new HttpError(403, policyDeniedBody([reason]))
    }
    return { findings: findingsOf(report), recorded }
  }
  const assessRisk = createSignTimeRisk({
    recent: recentPreflights,
    simulate: async (intent, built) => {
      const report = await simulate(intent, built)
      await recordPreflight(intent, report)
      return simulationFactsOf(report)
    },
    policy: deps.policy,
    routers: deps.routers,
  })
  await app.register(healthRoutes, { clock, startedAtMs: clock() })
  // An approval request holds its intent id: build, approve-request and sign-and-send refuse another body under it.
  const reserved = createReservedIntents(deps.intentReservations, clock)
  // What became of what was sent: sign-and-send replaces a transaction that can never be mined, approve-request asks again for one that needed approval.
  const fates = createSentTxFates(deps.sentTxs, chains, clock)
  await app.register(buildRoutes, { audit: deps.audit, policyGate, buildIntent, reserved })
  await app.register(signAndSendRoutes, {
    audit: deps.audit,
    policyGate,
    buildIntent,
    chains,
    queue: createWalletQueue(),
    sentTxs: deps.sentTxs,
    knownRecipients: deps.knownRecipients,
    signer: deps.signer,
    clock,
    assessRisk,
    policy: deps.policy,
    reserved,
    fates,
    l1Fee,
  })
  // Known only to this process: the approve-requests the skill sandbox runner makes (app.inject below).
  const skillCalls = createSkillCalls()
  // Tickets and update pages are checked for shape before anything reads them: the approver is another process.
  const approver = checkedApprover(deps.approver)
  const waiters = createApprovalWaiters({ approver, clock, log: (msg, err) => app.log.warn({ err }, msg) })
  app.addHook('onClose', async () => waiters.close())
  await app.register(approveRequestRoutes, {
    audit: deps.audit,
    policyGate,
    buildIntent,
    approver,
    waiters,
    tokenFacts,
    skillCalls,
    signerWallets: createSignerWallets(deps.signer, clock),
    reserved,
    fates,
    preflight: deps.preflight ?? approvalPreflight,
  })
  await app.register(approverProxyRoutes, { approverSocket: deps.approverHttpSocket })
  forwardApproverWebSocket(app, deps.approverHttpSocket, deps.host)
  await app.register(preflightRoutes, { buildIntent, chains, simulate, record: recordPreflight })
  await app.register(chainReadRoutes, { chains })
  await app.register(historyRoutes, { audit: deps.audit })
  await app.register(intentTxRoutes, { sentTxs: deps.sentTxs })
  await app.register(skillRoutes, {
    audit: deps.audit,
    registry: deps.skills.registry,
    skillsDir: deps.skills.dir,
    analyse: deps.skills.analyse,
    concurrency: deps.skills.concurrency,
    sandbox: deps.skills.sandbox,
    operator: deps.operator ?? approverOperatorAuthority(deps.approver),
    publishers: deps.skills.publishers,
    clock,
    runDir: deps.skills.runDir,
    // A skill's intent takes the same road as any agent's: approve-request.
    // The call's headers tell the route that the sandbox runner stamped
    // metadata.source (the only way a card says "skill"), and when the run
    // stops: the route then withdraws the request this call created, if any.
    submitIntent: async (intent, signal) => {
      const call = skillCalls.begin(signal)
      try {
        const res = await app.inject({ method: 'POST', url: '/v1/tx/approve-request', payload: intent, headers: call.headers })
        return { status: res.statusCode, body: res.json() as unknown }
      } finally {
        call.end()
      }
    },
  })
  const openapi = buildOpenApiDocument()
  app.get('/v1/openapi.json', { schema: openApiRouteSchema }, async () => openapi)
  return app
}
