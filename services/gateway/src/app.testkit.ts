// Builds a gateway app on real SQLite files in a fresh temp dir, for inject tests.
import { mkdtempSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {
  approverMethods,
  signerMethods,
  defaultPolicyConfig,
  defaultRouterTable,
  openAuditLog,
  type AuditLog,
  type PolicyConfig,
} from '@countersign/shared'
import type { RouteOptions } from 'fastify'
import { WALLET } from '@countersign/shared/testing/intents'
import type { ConnectionLimits } from '@countersign/shared/http/connectionLimits'
import { buildGatewayApp } from './app.js'
import { createChainClients } from './chain/chainClients.js'
import type { RunPreflight } from './routes/approveRequest.js'
import { openGatewayDb } from './store/gatewayDb.js'
import { openRateLimitStore } from './store/rateLimits.js'
import { createKnownRecipients } from './store/knownRecipients.js'
import { createSentTxs } from './store/sentTxs.js'
import { createSwapRoutes } from './store/swapRoutes.js'
import { createIntentReservations } from './store/intentReservations.js'
import { createSkillRegistry } from './skills/registry.js'
import type { FileReport, ScanFile } from './skills/scan/pool.js'
import type { SandboxStatus } from './skills/sandbox/probe.js'

export interface TestClock {
  (): number
  set(ms: number): void
  advance(ms: number): void
}

export function testClock(startMs = Date.UTC(2026, 10, 22, 12, 0, 0)): TestClock {
  let now = startMs
  const clock = (() => now) as TestClock
  clock.set = (ms) => {
    now = ms
  }
  clock.advance = (ms) => {
    now += ms
  }
  return clock
}

/** The inject tests' signer: lists WALLET, the intent factories' wallet, and signs nothing. */
async function signerHoldingTestWallet(method: string): Promise<unknown> {
  if (method === signerMethods.accounts) return [{ address: WALLET, label: null, dev: false, unlocked: true, backend: 'keystore' }]
  throw new Error('no signer in inject tests')
}

export async function makeTestGateway(
  opts: {
    policy?: Partial<PolicyConfig>
    dataDir?: string
    clock?: TestClock
    preflight?: (audit: AuditLog) => RunPreflight
    analyse?: (files: ScanFile[]) => Promise<FileReport[]>
    sandbox?: SandboxStatus
    skillConcurrency?: number
    operatorToken?: string | null
    skillPublishers?: string[]
    onRoute?: (route: RouteOptions) => void
    /** The audit log the routes get, made from the real one (to hold or fail its commits). */
    wrapAudit?: (audit: AuditLog) => AuditLog
    /** JSON-RPC endpoints by chain id (default: none configured). */
    rpcUrls?: Record<number, string>
    /** Where the approver's HTTP side is (the dashboard proxy); default a closed port. */
    approverHttpSocket?: string
    /** Answers the approver methods other than verifyOperatorToken (default: every call fails). */
    approver?: (method: string, params: unknown) => Promise<unknown>
    /** Time to send a request and connections at once (default: the gateway's own defaults). */
    connectionLimits?: ConnectionLimits
    /** Answers the signer's methods (default: accounts lists the intent factories' WALLET; every other call fails). */
    signer?: (method: string, params: unknown) => Promise<unknown>
  } = {},
) {
  const dataDir = opts.dataDir ?? mkdtempSync(path.join(os.tmpdir(), 'cs-gw-'))
  const clock = opts.clock ?? testClock()
  const audit: AuditLog = openAuditLog(path.join(dataDir, 'audit.db'), { clock })
  const routesAudit = opts.wrapAudit ? opts.wrapAudit(audit) : audit
  const db = openGatewayDb(path.join(dataDir, 'gateway.db'))
  const rateLimits = openRateLimitStore(audit, db, clock())
  const app = await buildGatewayApp({
    host: '127.0.0.1',
    bodyLimitBytes: 64 * 1024,
    audit: routesAudit,
    rateLimits,
    sentTxs: createSentTxs(db),
    knownRecipients: createKnownRecipients(db),
    swapRoutes: createSwapRoutes(db),
    intentReservations: createIntentReservations(db),
    // A signer that holds the key of the wallet the intent factories use (approve-request asks it first); it signs nothing.
    signer: { call: async <T>(method: string, params: unknown): Promise<T> => (opts.signer ?? signerHoldingTestWallet)(method, params) as Promise<T> },
    // The approver's answer to verifyOperatorToken, for the operator routes;
    // every other approver call fails (inject tests have no approver).
    approver: {
      call: async <T>(method: string, params: unknown): Promise<T> => {
        if (method !== approverMethods.verifyOperatorToken) {
          if (opts.approver) return (await opts.approver(method, params)) as T
          throw new Error('no approver in inject tests')
        }
        const expected = opts.operatorToken === undefined ? 'test-operator-token' : opts.operatorToken
        const given = (params as { token: string | null }).token
        return (expected === null ? { required: false, valid: true } : { required: true, valid: given === expected }) as T
      },
    },
    approverHttpSocket: opts.approverHttpSocket ?? '/nonexistent/countersign-test/approver-http.sock',
    ...(opts.rpcUrls ? { chains: createChainClients(opts.rpcUrls as Parameters<typeof createChainClients>[0]) } : {}),
    skills: {
      registry: createSkillRegistry(db),
      dir: path.join(dataDir, 'skills'),
      runDir: path.join(dataDir, 'run'),
      // Route tests that do not reach step 5 need no scanner; skill tests pass the real pool.
      analyse: opts.analyse ?? (async () => { throw new Error('no scanner in this test gateway') }),
      concurrency: opts.skillConcurrency ?? 2,
      sandbox: opts.sandbox ?? { available: true },
      publishers: new Set((opts.skillPublishers ?? []).map((a) => a.toLowerCase())),
    },
    policy: { ...defaultPolicyConfig(), ...opts.policy },
    routers: defaultRouterTable(),
    clock,
    ...(opts.onRoute ? { onRoute: opts.onRoute } : {}),
    ...(opts.connectionLimits ? { connectionLimits: opts.connectionLimits } : {}),
    ...(opts.preflight ? { preflight: opts.preflight(audit) } : {}),
  })
  const close = async () => {
    await app.close()
    await audit.close()
    db.close()
  }
  return { app, audit, db, clock, dataDir, close }
}
