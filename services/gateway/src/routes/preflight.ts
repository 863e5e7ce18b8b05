import type { FastifyPluginAsync } from 'fastify'
import { txIntentSchema, normalizeIntent, type AuditLog, type TxIntent } from '@countersign/shared'
import type { IntentBuilder } from '../pipeline/intentBuilder.js'
import type { ChainClients } from '../chain/chainClients.js'
import { rpcFailure } from '../chain/chainClients.js'
import { runPreflight, type PreflightDeps } from '../preflight/runPreflight.js'

export interface PreflightRouteOptions {
  audit: AuditLog
  buildIntent: IntentBuilder
  chains: ChainClients
  preflight: PreflightDeps
}

export const preflightRoutes: FastifyPluginAsync<PreflightRouteOptions> = async (app, opts) => {
  app.post('/v1/tx/preflight', { schema: { body: txIntentSchema } }, async (req) => {
    const intent = normalizeIntent(req.body as TxIntent)
    const chain = opts.chains.get(intent.chain.chainId)
    const built = await opts.buildIntent(intent)
    let report
    try {
      report = await runPreflight(intent, built, chain, opts.preflight)
    } catch (err) {
      throw rpcFailure(err, intent.chain.chainId)
    }
    await opts.audit.append({
      intentId: intent.id,
      event: 'preflight_completed',
      data: { simulationSuccess: report.simulationSuccess, riskScore: report.riskScore, gasEstimate: report.gasEstimate, simulationMethod: report.simulationMethod },
    })
    return report
  })
}
