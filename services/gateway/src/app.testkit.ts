// Builds a gateway app on real SQLite files in a fresh temp dir, for inject tests.
import { mkdtempSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {
  defaultPolicyConfig,
  defaultRouterTable,
  openAuditLog,
  type AuditLog,
  type PolicyConfig,
} from '@countersign/shared'
import { buildGatewayApp } from './app.js'
import { openGatewayDb } from './store/gatewayDb.js'
import { createRateLimitStore } from './store/rateLimits.js'
import { createKnownRecipients } from './store/knownRecipients.js'
import { createSentTxs } from './store/sentTxs.js'
import { createSwapRoutes } from './store/swapRoutes.js'

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

export async function makeTestGateway(opts: { policy?: Partial<PolicyConfig>; dataDir?: string; clock?: TestClock } = {}) {
  const dataDir = opts.dataDir ?? mkdtempSync(path.join(os.tmpdir(), 'cs-gw-'))
  const clock = opts.clock ?? testClock()
  const audit: AuditLog = openAuditLog(path.join(dataDir, 'audit.db'), { clock })
  const db = openGatewayDb(path.join(dataDir, 'gateway.db'))
  const rateLimits = createRateLimitStore(db, { nowMs: clock() })
  const app = await buildGatewayApp({
    host: '127.0.0.1',
    bodyLimitBytes: 64 * 1024,
    audit,
    rateLimits,
    sentTxs: createSentTxs(db),
    knownRecipients: createKnownRecipients(db),
    swapRoutes: createSwapRoutes(db),
    signer: { call: async () => { throw new Error('no signer in inject tests') } },
    approver: { call: async () => { throw new Error('no approver in inject tests') } },
    approverUrl: 'http://127.0.0.1:9',
    policy: { ...defaultPolicyConfig(), ...opts.policy },
    routers: defaultRouterTable(),
    clock,
  })
  const close = async () => {
    await app.close()
    rateLimits.flush()
    await audit.close()
    db.close()
  }
  return { app, audit, db, clock, dataDir, close }
}
