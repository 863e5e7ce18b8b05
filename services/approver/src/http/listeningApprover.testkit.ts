// A real approver HTTP app in web mode, listening on a TCP port and on the
// HTTP socket the gateway forwards to, for tests that speak raw HTTP to both.
import { randomUUID } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import type net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { defaultRouterTable, openAuditLog } from '@countersign/shared'
import { createApprovalService } from '../approvalService.js'
import { webChannel } from '../channels/webChannel.js'
import { PendingRequests } from '../requests/pendingRequests.js'
import { buildApproverApp } from './app.js'
import { listenOnSocket } from './socketListener.js'

export const OPERATOR_TOKEN = 'operator-secret-operator-secret-1234'

export interface ListeningApprover {
  port: number
  socketPath: string
  close(): Promise<void>
}

export async function startListeningApprover(opts: Pick<Parameters<typeof buildApproverApp>[0], 'connectionLimits' | 'wsAuthTimeoutMs'> = {}): Promise<ListeningApprover> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cs-appr-http-'))
  const clock = () => Date.now()
  const audit = openAuditLog(path.join(dir, 'audit.db'), { clock })
  const pending = new PendingRequests(clock, { ttlMs: 300_000, perWallet: 5, total: 500 })
  const granter = { grant: async () => ({ approvalTokenId: randomUUID(), expiresAt: clock() + 300_000 }), durable: async () => undefined }
  const service = createApprovalService({ mode: 'web', pending, granter, audit, routers: defaultRouterTable(), clock })
  const web = webChannel(clock)
  service.addChannel(web)
  const app = await buildApproverApp({ host: '127.0.0.1', service, web, audit, clock, operatorToken: OPERATOR_TOKEN, ...opts })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const socketPath = path.join(dir, 'run', 'approver-http.sock')
  const closeSocket = await listenOnSocket(app, socketPath, 0o600)
  return {
    port: (app.server.address() as net.AddressInfo).port,
    socketPath,
    async close() {
      await closeSocket()
      await app.close()
      await audit.close()
    },
  }
}
