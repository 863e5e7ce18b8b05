import type { TypedRoutes } from '@countersign/shared/http/typeProvider'
import { normalizeIntent, type BuiltTx, type TxIntent } from '@countersign/shared'
import { balanceDiffSchema, riskFactorSchema } from '@countersign/shared/http/approvalsContract'
import { validationErrorSchema } from '@countersign/shared/http/errorBodies'
import { bool, closed, described, int, nullableInt, nullableStr, str, strings } from '@countersign/shared/http/schemaParts'
import type { IntentBuilder } from '../pipeline/intentBuilder.js'
import type { ChainClients } from '../chain/chainClients.js'
import { rpcFailure } from '../chain/chainClients.js'
import type { PreflightReport } from '../preflight/runPreflight.js'
import { noRpcOrRpcError } from './contractParts.js'
import { txIntentInputSchema } from './intentInput.js'

export interface PreflightRouteOptions {
  buildIntent: IntentBuilder
  chains: ChainClients
  /** Runs the preflight and remembers it for sign-and-send; throws when the node fails. */
  simulate: (intent: TxIntent, built: BuiltTx) => Promise<PreflightReport>
  /** Audits preflight_completed. */
  record: (intent: TxIntent, report: PreflightReport) => Promise<unknown>
}

const gasCostSchema = {
  description:
    'Gas limit (as sign-and-send sets it) times the current max fee, plus the L1 data fee on Optimism and Base (l1FeeWei, the figure of the GasPriceOracle predeploy now; "0" elsewhere; null when it could not be read, then the cost is the gas part alone and signal l1_fee_unknown says so), against constraints.maxGasWei; a cost above it is also a warning, and approve-request refuses it (403) before any operator is asked. null without an estimate or fee data',
  anyOf: [closed({ gas: str, maxFeePerGas: str, l1FeeWei: nullableStr, costWei: str, maxGasWei: str, withinLimit: bool }), { type: 'null' }],
}

/** SPEC "Preflight result", and everything else the report holds. */
export const preflightReportSchema = closed({
  intentId: str,
  simulationSuccess: bool,
  riskScore: { type: 'number', minimum: 0, maximum: 100 },
  gasEstimate: str,
  warnings: strings,
  balanceDiffs: { type: 'array', items: balanceDiffSchema },
  riskReasons: strings,
  riskFactors: { type: 'array', items: riskFactorSchema },
  signals: { type: 'array', items: closed({ id: str, message: str }) },
  revertReason: nullableStr,
  allowanceChanges: { type: 'array', items: closed({ token: str, spender: str, before: str, after: str }) },
  simulationMethod: { enum: ['eth_simulateV1', 'eth_call'] },
  gasCost: gasCostSchema,
  tokenFacts: { type: 'array', description: "the chain's symbol() and decimals() of the intent's tokens that have code", items: closed({ address: str, symbol: nullableStr, decimals: nullableInt }) },
})

export const preflightRouteSchema = {
  operationId: 'preflight',
  body: txIntentInputSchema,
  response: {
    200: described('Simulated and scored (a reverting transaction is a 200 with simulationSuccess false)', preflightReportSchema),
    400: validationErrorSchema,
    502: noRpcOrRpcError,
  },
}

export const preflightRoutes: TypedRoutes<PreflightRouteOptions> = async (app, opts) => {
  app.post('/v1/tx/preflight', { schema: preflightRouteSchema }, async (req) => {
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
