#!/usr/bin/env node
// The approver process: holds approval requests, serves the dashboard and its
// live feed, asks on the terminal in cli mode, and asks the signer (over
// grant.sock, its only power) to mint a token when an operator approves.
import { listenHttp } from '@countersign/shared/http/activatedSocket'
import { DEFAULT_CONNECTION_LIMITS } from '@countersign/shared/http/connectionLimits'
import path from 'node:path'
import {
  BuildError,
  RpcError,
  approverMethods,
  createAjv,
  createRpcClient,
  createRpcServer,
  defaultPolicyConfig,
  describeFailure,
  describeValidationErrors,
  loadPolicyFile,
  localUrlOf,
  quorumFor,
  holdInstanceLock,
  makePrivateDir,
  openAuditLog,
  requestApprovalParamsSchema,
  routerTableFromEnv,
  socketConfigFromEnv,
  systemClock,
  verifyOperatorTokenParamsSchema,
  WAL_CHECKPOINT_FAILED_MESSAGE,
  withdrawApprovalParamsSchema,
  approvalUpdatesParamsSchema,
  APPROVAL_REFUSED,
  RPC_INVALID_PARAMS,
  type ApprovalRefusalData,
  type ApprovalUpdatesParams,
  type VerifyOperatorTokenParams,
  type VerifyOperatorTokenResult,
  type RequestApprovalParams,
  type WithdrawApprovalParams,
  warnUnknownVariables,
} from '@countersign/shared'
import { ApprovalRefusal, createApprovalService } from './approvalService.js'
import { autoChannel } from './channels/autoChannel.js'
import { terminalChannel } from './channels/terminalChannel.js'
import { webhookChannel } from './channels/webhookChannel.js'
import { webChannel } from './channels/webChannel.js'
import { createTerminalPrompt } from './cliPrompt.js'
import { ConfigError, isLocalUrl, loadApproverConfig } from './config.js'
import { buildApproverApp } from './http/app.js'
import { listenOnSocket } from './http/socketListener.js'
import { loadOrCreateOperatorToken } from './operatorToken.js'
import { createFailedSignIns, describeSignInFailures, recordingRefusals, type SignInFailureSummary } from './operators/failedSignIns.js'
import { loadOperatorsFile, singleTokenOperators } from './operators/operators.js'
import { quorumStartProblem } from './quorum/quorumStart.js'
import { DEFAULT_PENDING_LIMITS, PendingRequests } from './requests/pendingRequests.js'
import { signerGranter } from './signerGranter.js'
import { startWebhookDispatcher } from './webhooks/dispatcher.js'
import { WebhookOutbox } from './webhooks/outbox.js'
import { loadWebhookTarget } from './webhooks/webhookConfig.js'

// Expired requests end within a second (their callers get approval_expired); the list never shows them anyway.
const SWEEP_MS = 1_000

async function main(): Promise<void> {
  // First: a misspelt name may be why the configuration below is refused.
  warnUnknownVariables(process.env, 'approver')
  const config = loadApproverConfig(process.env)
  const routers = routerTableFromEnv(process.env)
  const webhookTarget = loadWebhookTarget(process.env)
  if (config.channels.includes('webhook') && !webhookTarget) {
    throw new ConfigError('SERVICE_APPROVAL_CHANNELS includes webhook: set SERVICE_WEBHOOK_URL and SERVICE_WEBHOOK_SECRET (or SERVICE_WEBHOOK_SECRET_FILE)')
  }
  const clock = systemClock
  if (config.mode === 'auto') {
    const remote = config.rpcUrls.filter((r) => !isLocalUrl(r.url))
    if (remote.length > 0 && !config.allowAutoApproval) {
      throw new ConfigError(
        `SERVICE_APPROVAL_MODE=auto approves every request without a human; refusing with a non-local RPC URL (${remote.map((r) => r.variable).join(', ')}). Set SERVICE_ALLOW_AUTO_APPROVAL=1 if you really mean it.`,
      )
    }
  }
  // The same policy file as the gateway and the signer: the approver decides for itself which requests need a quorum.
  const policy = config.policyFile ? loadPolicyFile(config.policyFile) : defaultPolicyConfig()
  makePrivateDir(config.dataDir)
  // Before anything is read or bound: a second approver on this data directory stops here, in one sentence.
  // Held for the process's life (the exit listener also keeps it from being collected, which would drop it).
  const instanceLock = holdInstanceLock(config.dataDir, 'approver')
  process.once('exit', () => instanceLock.release())
  // Loaded before the socket opens: the gateway may ask about it at once.
  // SERVICE_OPERATORS_FILE (named operators, each with their own token) replaces the single operator token.
  const namedOps = config.operatorAuth && config.operatorsFile ? loadOperatorsFile(config.operatorsFile) : null
  const quorumProblem = quorumStartProblem({
    required: policy.requireQuorumAbove?.approvals ?? null,
    operatorAuth: config.operatorAuth,
    namedOperators: namedOps?.named ?? 0,
    channels: config.channels,
  })
  if (quorumProblem) throw new ConfigError(quorumProblem)
  const token = config.operatorAuth && !namedOps ? loadOrCreateOperatorToken(config.dataDir, config.operatorToken) : null
  const operators = namedOps ?? (token ? singleTokenOperators(token.token) : null)
  const auditFile = path.join(config.dataDir, 'audit.db')
  // Grouped fsync: commits write without an fsync and one fdatasync covers those made together.
  // Every append still resolves after it; auto mode answers the gateway at the commit (approveAtOnce).
  // On stderr until the app's logger exists.
  let walCheckpointFailed = (err: Error): void => void process.stderr.write(`countersign approver: ${WAL_CHECKPOINT_FAILED_MESSAGE}: ${err.message}\n`)
  const audit = openAuditLog(auditFile, { fsync: 'grouped', onWalCheckpointError: (err) => walCheckpointFailed(err) })
  // Webhooks are filled from the audit log (the gateway's broadcasts included) into webhooks.db, then delivered in order.
  const outbox = webhookTarget ? new WebhookOutbox(path.join(config.dataDir, 'webhooks.db'), auditFile) : null
  const sockets = socketConfigFromEnv(process.env, config.dataDir)
  const signer = createRpcClient({ socketPath: sockets.grant, timeoutMs: 10_000 })
  const pending = new PendingRequests(clock, { ...DEFAULT_PENDING_LIMITS, ttlMs: config.requestTtlMs })
  const service = createApprovalService({
    mode: config.channels.join(','),
    pending,
    granter: signerGranter(signer),
    audit,
    routers,
    clock,
    quorumFor: (intent) => quorumFor(policy, intent)?.approvals ?? null,
    // Auto mode and SERVICE_OPERATOR_AUTH=off never count: the start check refuses a quorum there, this refuses the gateway's.
    namedOperators: config.channels.includes('auto') ? 0 : (namedOps?.named ?? 0),
    onBackgroundError: (err) => process.stderr.write(`countersign approver: audit.db: ${err.message}\n`),
  })
  const sweep = setInterval(() => void service.sweep(), SWEEP_MS)
  sweep.unref()
  const dispatcher =
    outbox && webhookTarget
      ? startWebhookDispatcher({ outbox, target: webhookTarget, clock, onError: (err) => process.stderr.write(`countersign approver: webhook outbox: ${err.message}\n`) })
      : null
  // Every configured channel is shown each request; the first decision wins and the others withdraw it.
  const web = webChannel(clock)
  for (const name of config.channels) {
    if (name === 'auto') service.addChannel(autoChannel())
    else if (name === 'web') service.addChannel(web)
    else if (name === 'cli') service.addChannel(terminalChannel(service, createTerminalPrompt(config.cliTimeoutMs)))
    else if (name === 'webhook' && dispatcher) service.addChannel(webhookChannel(dispatcher))
  }

  // Refused operator tokens, wherever presented, become audit rows (a row a minute at most while they go on).
  let logSignInFailures = (summary: SignInFailureSummary): void => void process.stderr.write(`countersign approver: ${describeSignInFailures(summary)}\n`)
  const failedSignIns = createFailedSignIns({
    audit,
    clock,
    onRecorded: (summary) => logSignInFailures(summary),
    onError: (err) => process.stderr.write(`countersign approver: audit.db: ${err.message}\n`),
  })
  const gatewayOperators = operators && recordingRefusals(operators, failedSignIns, 'gateway_operator_route')

  const ajv = createAjv()
  const validRequest = ajv.compile<RequestApprovalParams>(requestApprovalParamsSchema)
  const validWithdraw = ajv.compile<WithdrawApprovalParams>(withdrawApprovalParamsSchema)
  const validVerify = ajv.compile<VerifyOperatorTokenParams>(verifyOperatorTokenParamsSchema)
  const validUpdates = ajv.compile<ApprovalUpdatesParams>(approvalUpdatesParamsSchema)
  const rpc = createRpcServer({
    socketPath: sockets.approver,
    socketMode: sockets.mode,
    methods: {
      // Answers at once; nothing on this socket waits for a human.
      [approverMethods.requestApproval]: (params) => {
        if (!validRequest(params)) throw new RpcError(RPC_INVALID_PARAMS, describeValidationErrors(validRequest.errors, 'params'))
        return service.requestApproval(params).catch((err: unknown) => {
          // An aggregator transaction that does not match its intent is refused, not an internal error.
          if (err instanceof BuildError) throw new RpcError(RPC_INVALID_PARAMS, err.message)
          if (err instanceof ApprovalRefusal) throw new RpcError(APPROVAL_REFUSED, err.message, { reason: err.reason } satisfies ApprovalRefusalData)
          throw err
        })
      },
      [approverMethods.approvalUpdates]: (params) => {
        if (!validUpdates(params)) throw new RpcError(RPC_INVALID_PARAMS, describeValidationErrors(validUpdates.errors, 'params'))
        return service.updates(params.cursor)
      },
      [approverMethods.withdrawApproval]: (params) => {
        if (!validWithdraw(params)) throw new RpcError(RPC_INVALID_PARAMS, describeValidationErrors(validWithdraw.errors, 'params'))
        return { withdrawn: service.withdrawOwn(params.owner) }
      },
      // Operator authority for the gateway's own operator routes (skill
      // registration and revocation): the token never leaves this process.
      [approverMethods.verifyOperatorToken]: (params): VerifyOperatorTokenResult => {
        if (!validVerify(params)) throw new RpcError(RPC_INVALID_PARAMS, describeValidationErrors(validVerify.errors, 'params'))
        if (gatewayOperators === null) return { required: false, valid: true }
        return { required: true, valid: gatewayOperators.identify(params.token) !== null }
      },
    },
  })
  await rpc.listen()

  const app = await buildApproverApp({
    host: config.host,
    service,
    web,
    audit,
    clock,
    operatorToken: token?.token ?? null,
    operators,
    failedSignIns,
    webhooks: outbox,
    logger: { level: config.logLevel },
    connectionLimits: { ...DEFAULT_CONNECTION_LIMITS, maxConnections: config.maxConnections },
  })
  walCheckpointFailed = (err) => app.log.warn({ err: err.message }, WAL_CHECKPOINT_FAILED_MESSAGE)
  logSignInFailures = (summary) => app.log.warn({ ...summary }, describeSignInFailures(summary))
  // On the socket systemd holds for it when started by its .socket unit (deploy/systemd).
  await listenHttp(app, { host: config.host, port: config.port, portVariable: 'SERVICE_APPROVER_PORT' })
  const closeSocketListener = await listenOnSocket(app, sockets.approverHttp, sockets.mode)
  const address = app.server.address()
  const port = typeof address === 'object' && address ? address.port : config.port

  if (config.mode === 'auto') {
    process.stderr.write('!!! SERVICE_APPROVAL_MODE=auto: every request that policy sends to approval is APPROVED WITHOUT A HUMAN. Testing only. !!!\n')
    app.log.warn('!!! SERVICE_APPROVAL_MODE=auto: every request that policy sends to approval is APPROVED WITHOUT A HUMAN. Testing only. !!!')
  }
  if (!config.operatorAuth) {
    app.log.warn('SERVICE_OPERATOR_AUTH=off: anyone who can reach the API can approve requests, including the agents that made them')
  }
  // Printed whatever the log level: the operator needs the dashboard address.
  process.stderr.write(
    `countersign approver ready: channels ${config.channels.join(',')}; dashboard http://127.0.0.1:${config.gatewayPort}/approval-ui ` +
      `(directly: ${localUrlOf({ host: config.host, port })}/approval-ui); webhooks ${webhookTarget ? `to ${new URL(webhookTarget.url).origin}` : 'off'}; operator token ${namedOps ? `per operator (${namedOps.named} in ${config.operatorsFile}${policy.requireQuorumAbove ? `; quorum of ${policy.requireQuorumAbove.approvals} above the policy's requireQuorumAbove` : ''})` : token?.file ? `in ${token.file}` : token ? 'from SERVICE_OPERATOR_TOKEN' : 'not required (SERVICE_OPERATOR_AUTH=off)'}\n`,
  )

  let closing = false
  const shutdown = async (signal: string) => {
    if (closing) return
    closing = true
    app.log.info({ signal }, 'shutting down')
    clearInterval(sweep)
    await dispatcher?.stop()
    outbox?.close()
    await closeSocketListener()
    await app.close()
    await rpc.close()
    signer.close()
    await failedSignIns.close()
    await audit.close()
    process.exit(0)
  }
  process.once('SIGINT', () => void shutdown('SIGINT'))
  process.once('SIGTERM', () => void shutdown('SIGTERM'))
}

main().catch((err: unknown) => {
  process.stderr.write(`countersign approver: ${describeFailure(err)}\n`)
  process.exit(1)
})
