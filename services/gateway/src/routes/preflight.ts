import type { TypedRoutes } from '@countersign/shared/http/typeProvider'
import { txIntentSchema, normalizeIntent, type BuiltTx, type TxIntent } from '@countersign/shared'
import type { IntentBuilder } from '../pipeline/intentBuilder.js'
import type { ChainClients } from '../chain/chainClients.js'
import { rpcFailure } from '../chain/chainClients.js'
import type { PreflightReport } from '../preflight/runPreflight.js'

export interface PreflightRouteOptions {
  buildIntent: IntentBuilder
  chains: ChainClients
  /** Runs the preflight and remembers it for sign-and-send; throws when the node fails. */
  simulate: (intent: TxIntent, built: BuiltTx) => Promise<PreflightReport>
  /** Audits preflight_completed. */
  record: (intent: TxIntent, report: PreflightReport) => Promise<unknown>
}

export const preflightRoutes: TypedRoutes<PreflightRouteOptions> = async (app, opts) => {
  app.post('/v1/tx/preflight', { schema: { body: txIntentSchema } }, async (req) => {
    const intent = normalizeIntent(req.body)
    opts.chains.get(intent.chain.chainId)
    const built = await opts.buildIntent(intent)
    let report
    try {
      report = await opts.simulate(intent, built)
    } catch (err) {
      throw rpcFailure(err, intent.chain.chainId)
    }
    await opts.record(intent, report)
    return report
  })
}
